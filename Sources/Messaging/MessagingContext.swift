import CZeroMQ
import Foundation
import Synchronization

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

    /// How long ``terminate(waitingAtMost:)`` waits for libzmq by default: the longest linger Shiftwork gives
    /// a socket (500 ms, `SocketOptions.lingerMilliseconds`) and as long again for its I/O thread, so that
    /// a process that stops exits within 2 s of the signal even on a loaded machine.
    public static let defaultTerminationWait: Duration = .seconds(1)

    /// Terminates the context once every socket is closed, waiting at most `limit` for libzmq.
    ///
    /// libzmq's `zmq_ctx_term` blocks until its I/O thread has let go of every socket, and that thread can
    /// itself be blocked for a long time: reconnecting to a host *name*, it resolves the name with a
    /// blocking `getaddrinfo`, which takes 5 s per unanswered query when the DNS server has vanished with
    /// the network (a compose stack or a container network torn down), 10 to 60 s in all. A process that is
    /// stopping must not wait for that: `zmq_ctx_term` runs on a thread of its own (never on Swift's
    /// cooperative pool), and after `limit` this returns anyway, leaving that thread to finish, or to end
    /// with the process. `nil` waits for as long as libzmq takes. Calling it twice is harmless (the second
    /// call returns `true` at once).
    ///
    /// - Returns: whether libzmq finished within `limit` (`false`: it still waits, e.g. on such a lookup).
    @discardableResult
    public func terminate(waitingAtMost limit: Duration? = MessagingContext.defaultTerminationWait) async -> Bool {
        let shouldTerminate: Bool = terminated.withLock {
            defer { isTerminated = true }
            return !isTerminated
        }
        guard shouldTerminate else { return true }
        let handle = UncheckedPointer(self.handle)
        let outcome = TerminationOutcome()
        let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            outcome.wait(continuation)
            let thread = Thread {
                while zmq_ctx_term(handle.pointer) != 0 && zmq_errno() == EINTR {}
                outcome.settle(true)
            }
            thread.name = "zmq-ctx-term"
            thread.start()
            if let limit {
                outcome.timer = Task {
                    try? await Task.sleep(for: limit)
                    outcome.settle(false)
                }
            }
        }
        outcome.timer?.cancel()
        return finished
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
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}

/// Moves a raw pointer into a `@Sendable` closure where the caller guarantees exclusive use.
struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}

/// Whichever comes first of `zmq_ctx_term` returning and the wait's limit: resumes the waiter once.
private final class TerminationOutcome: Sendable {
    private let state = Mutex<(waiter: CheckedContinuation<Bool, Never>?, settled: Bool)>((nil, false))
    private let timerTask = Mutex<Task<Void, Never>?>(nil)

    /// The task that settles with `false` at the limit (cancelled once settled).
    var timer: Task<Void, Never>? {
        get { timerTask.withLock { $0 } }
        set { timerTask.withLock { $0 = newValue } }
    }

    func wait(_ continuation: CheckedContinuation<Bool, Never>) {
        state.withLock { $0.waiter = continuation }
    }

    /// Resumes the waiter with `finished`, unless it was resumed already.
    func settle(_ finished: Bool) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard !state.settled else { return nil }
            state.settled = true
            return state.waiter
        }
        waiter?.resume(returning: finished)
    }
}
