import Dispatch
import Glibc

/// Waits for SIGINT or SIGTERM, so that long-running commands can shut down gracefully.
enum TerminationSignal {
    /// Suspends until the process receives SIGINT or SIGTERM; returns the signal number.
    static func wait() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let queue = DispatchQueue(label: "shiftwork.signals")
            let resumed = ResumeOnce(continuation)
            var sources: [DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { @Sendable in resumed.resume(number) }
                source.resume()
                sources.append(source)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps signal sources alive for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) private static var all: [DispatchSourceSignal] = []
    static func keep(_ sources: [DispatchSourceSignal]) { all += sources }
}

/// Resumes a continuation at most once, from any thread.
private final class ResumeOnce: @unchecked Sendable {
    // `lock` guards `continuation`.
    private let lock = Mutex()
    private var continuation: CheckedContinuation<Int32, Never>?
    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }
    func resume(_ value: Int32) {
        lock.lock()
        let continuation = self.continuation
        self.continuation = nil
        lock.unlock()
        continuation?.resume(returning: value)
    }
}

/// A plain pthread mutex.
private final class Mutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
