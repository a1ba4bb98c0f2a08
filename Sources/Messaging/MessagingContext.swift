import CZeroMQ
import Foundation

/// A ZeroMQ context: the owner of the I/O threads and of `inproc://` endpoints.
///
/// One per process is usual. Sockets that talk over `inproc://` must share a context, which is how the
/// embedded default runs a coordinator and its workers in one process. A context is safe to share
/// between threads (libzmq guarantees it); its sockets are not, so each `SocketChannel` gives its socket
/// a thread of its own.
public final class MessagingContext: @unchecked Sendable {
    // The raw pointer is immutable after init and libzmq contexts are thread-safe.
    let handle: UnsafeMutableRawPointer
    private let terminated = NSLock()
    private nonisolated(unsafe) var isTerminated = false

    /// Creates a context with `ioThreads` background I/O threads.
    public init(ioThreads: Int32 = 1) throws {
        guard let handle = zmq_ctx_new() else { throw ZeroMQError.last("zmq_ctx_new") }
        self.handle = handle
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        // Never let a signal handler's EINTR surprise a blocking call: libzmq retries internally.
        zmq_ctx_set(handle, ZMQ_BLOCKY, 0)
    }

    /// Terminates the context once every socket is closed. Runs libzmq's blocking `zmq_ctx_term` on a
    /// thread of its own, so it never blocks Swift's cooperative pool. Calling it twice is harmless.
    public func terminate() async {
        let shouldTerminate: Bool = terminated.withLock {
            defer { isTerminated = true }
            return !isTerminated
        }
        guard shouldTerminate else { return }
        let handle = UncheckedPointer(self.handle)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                while zmq_ctx_term(handle.pointer) != 0 && zmq_errno() == EINTR {}
                continuation.resume()
            }
            thread.name = "zmq-ctx-term"
            thread.start()
        }
    }

    deinit {
        let alreadyTerminated = terminated.withLock { isTerminated }
        if !alreadyTerminated {
            // Every socket has a finite linger, so this returns once they are closed.
            zmq_ctx_shutdown(handle)
            while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
        }
    }

    /// The libzmq version this process runs on, e.g. `4.3.4`.
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}

/// Moves a raw pointer into a `@Sendable` closure where the caller guarantees exclusive use.
struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}
