import Foundation
import Synchronization

/// A few threads of their own for blocking work (reading local files), so that it never occupies
/// Swift's cooperative pool, which has only one thread per core.
///
/// ``run(_:)`` queues a job and suspends the calling task until a thread has run it. Thread ownership:
/// the job queue is guarded by one `NSCondition`; each job runs on exactly one of the threads.
final class BlockingThreads: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    /// Guarded by `condition`.
    private var stopping = false

    /// Starts `count` threads named `name`.
    init(count: Int, name: String) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in serve() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `work` on one of the threads and returns its result. `work` is given a function that says
    /// whether the calling task was cancelled meanwhile, to stop early. Throws what `work` threw, or
    /// `BlockingThreadsStopped` when the threads were stopped.
    func run<Value: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws -> Value
    ) async throws -> Value {
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let job: @Sendable () -> Void = {
                    continuation.resume(with: Result { try work { cancelled.isSet } })
                }
                condition.lock()
                let accepted = !stopping
                if accepted {
                    jobs.append(job)
                    condition.signal()
                }
                condition.unlock()
                if !accepted { continuation.resume(throwing: BlockingThreadsStopped()) }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Lets the threads finish the jobs queued and end; later jobs are refused. Does not wait.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}

/// Thrown by ``BlockingThreads/run(_:)`` after ``BlockingThreads/stop()``.
struct BlockingThreadsStopped: Error {}

/// Set once when a task is cancelled; read from another thread.
private final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
