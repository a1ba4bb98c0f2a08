import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a detached POSIX thread with a name and an 8 MiB stack. (Foundation's `Thread` does not apply a
/// name set before `start()` on Linux, and one set from inside races with `start()`: its threads may keep
/// the name of the thread that created them.)
public enum PoolThread {
    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` (its first 15 characters, Linux's limit) that runs `body` and ends.
    public static func start(name: String, _ body: @escaping () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 8 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
                // A thread Foundation did not start: `Thread.current` wraps it, and its name setter names it.
                Thread.current.name = String(start.name.prefix(15))
                start.body()
                return nil
            }, start)
        // Only fails when the system is out of threads or memory: nothing could run, so stop here.
        precondition(created == 0, "cannot start thread '\(name)': error \(created)")
    }
}
