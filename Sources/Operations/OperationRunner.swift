/// One Swift task that runs operations one after another (internal; it used to be called `Worker`, a
/// name the cluster uses for its worker processes).
///
/// A runner belongs to a ``RunnerPool`` (one per task priority). It takes launched operations from its
/// pool, runs each (conditions, then `execute()`), and when one finishes and makes a dependent ready, runs
/// that dependent next (`offer`) before going back to the pool: the cheap path for chains. An operation
/// that suspends (waits for a network reply, for its children, …) keeps its runner meanwhile, exactly as
/// it would keep a task of its own; the pool makes sure that another runner serves the operations still
/// waiting to run. So an operation costs a Swift task only when it actually needs one.
///
/// Cancelling the operation a runner runs cancels the runner's task (that is how `execute()` hears of
/// it). Task cancellation is sticky, so a runner whose task was cancelled, or is about to be, is never
/// reused: it gives back the operation it was offered and ends.
final class OperationRunner: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        /// The operation to run next, and its own pool (where it goes if this runner cannot run it).
        var next: (operation: AsyncOperation, pool: RunnerPool)?
        /// A cancellation arrived before the task handle was attached.
        var cancelRequested = false
        /// A cancellation of this task was decided (it may not have happened yet): never reuse the task.
        var cancelled = false
    }

    /// The pool this runner takes operations from.
    let pool: RunnerPool
    // Lock order: an operation's lock, then a runner's lock (never the other way round).
    private let state = LockedValue(State())

    private init(pool: RunnerPool) { self.pool = pool }

    /// Starts a new runner for `pool` on a new task; the pool counts it as searching for work.
    static func start(in pool: RunnerPool) {
        let runner = OperationRunner(pool: pool)
        let task = Task.detached(priority: pool.priority) { await runner.runOperations() }
        runner.attach(task)
    }

    /// The body of the runner's task.
    private func runOperations() async {
        var searching = true
        while true {
            var operation: AsyncOperation?
            switch pool.take(searching: searching) {
            case .operation(let taken):
                operation = taken
            case .park:
                await pool.park()
                searching = true
                continue
            case .exit:
                return detach()
            }
            searching = false
            while let current = operation {
                operation = nil
                await current.run(on: self)
                let (next, reusable) = takeNext()
                if !reusable {
                    // This task was (or is about to be) cancelled: the next operation must not see that.
                    if let next { next.pool.push(next.operation) }
                    return detach()
                }
                operation = next?.operation
            }
        }
    }

    private func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { s -> Bool in
            s.task = task
            return s.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    /// Drops the task handle (which refers back to this runner) when the task ends.
    private func detach() { state.withLock { $0.task = nil } }

    /// Takes `operation` (of `pool`) to run after the current one, if the runner has no other one yet.
    func offer(_ operation: AsyncOperation, pool: RunnerPool) -> Bool {
        state.withLock { s in
            guard s.next == nil else { return false }
            s.next = (operation, pool)
            return true
        }
    }

    /// The operation offered meanwhile, and whether this runner may run it (its task was not cancelled,
    /// nor is about to be).
    private func takeNext() -> ((operation: AsyncOperation, pool: RunnerPool)?, reusable: Bool) {
        state.withLock { s in
            let next = s.next.take()
            return (next, !s.cancelled)
        }
    }

    /// Called under the operation's lock before `cancelTask()`, so that the runner, which checks after the
    /// operation finished (under the same lock), never reuses a task that is about to be cancelled. (The
    /// runner's task is cancelled only this way: nobody else has its handle.)
    func cancellationWillBegin() { state.withLock { $0.cancelled = true } }

    /// Cancels the runner's task (at once, or as soon as its handle is attached).
    func cancelTask() {
        let task = state.withLock { s -> Task<Void, Never>? in
            if s.task == nil { s.cancelRequested = true }
            return s.task
        }
        task?.cancel()
    }
}
