import Runtime
import Synchronization

/// One Swift task that runs operations one after another (internal; it used to be called `Worker`, a
/// name the cluster uses for its worker processes).
///
/// A runner belongs to a ``RunnerPool`` (one per task priority). It takes launched operations from its
/// pool, runs each (conditions, then `execute()`), and when one finishes and makes a dependent ready, runs
/// that dependent next (`RunnerHandoff`) before going back to the pool: the cheap path for chains. An operation
/// that suspends (waits for a network reply, for its children, …) keeps its runner meanwhile, exactly as
/// it would keep a task of its own; the pool makes sure that another runner serves the operations still
/// waiting to run. So an operation holds a Swift task only while it runs, and creates none.
///
/// Cancelling the operation a runner runs cancels the runner's task (that is how `execute()` hears of
/// it). Task cancellation is sticky, so a runner whose task was cancelled, or is about to be, is never
/// reused: it gives back the operation it was offered and ends.
final class OperationRunner: Sendable {
    private struct TaskHandle {
        var task: Task<Void, Never>?
        /// A cancellation arrived before the task handle was attached.
        var cancelRequested = false
    }

    /// The pool this runner takes operations from.
    let pool: RunnerPool
    /// A cancellation of this runner's task was decided (it may not have happened yet): never reuse it.
    private let cancelled = Atomic<Bool>(false)
    // Lock order: an operation's lock, then a runner's lock (never the other way round).
    private let handle = LockedValue(TaskHandle())

    private init(pool: RunnerPool) { self.pool = pool }

    /// Starts a new runner for `pool` on a new task; the pool counts it as searching for work.
    static func start(in pool: RunnerPool) {
        let runner = OperationRunner(pool: pool)
        let task = Task.detached(priority: pool.priority) { await runner.runOperations() }
        runner.attach(task)
    }

    /// The body of the runner's task.
    private func runOperations() async {
        let handoff = RunnerHandoff()
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
                await current.run(on: self, handoff: handoff)
                handoff.startExternalOperations()
                let next = handoff.next.take()
                // (After the operation finished under its lock, which orders this load after any store.)
                if cancelled.load(ordering: .relaxed) {
                    // This task was (or is about to be) cancelled: the next operation must not see that.
                    if let next { next.pool.push(next.operation) }
                    return detach()
                }
                operation = next?.operation
            }
        }
    }

    private func attach(_ task: Task<Void, Never>) {
        let cancelNow = handle.withLock { h -> Bool in
            h.task = task
            return h.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    /// Drops the task handle (which refers back to this runner) when the task ends.
    private func detach() { handle.withLock { $0.task = nil } }

    /// Called under the operation's lock before `cancelTask()`, so that the runner, which checks after the
    /// operation finished (under the same lock), never reuses a task that is about to be cancelled. (The
    /// runner's task is cancelled only this way: nobody else has its handle.)
    func cancellationWillBegin() { cancelled.store(true, ordering: .relaxed) }

    /// Cancels the runner's task (at once, or as soon as its handle is attached).
    func cancelTask() {
        let task = handle.withLock { h -> Task<Void, Never>? in
            if h.task == nil { h.cancelRequested = true }
            return h.task
        }
        task?.cancel()
    }
}

/// Where an operation finishing on a runner leaves a dependent it made ready, for the runner to run next.
///
/// It belongs to one runner's task and is only used there, synchronously, while that task finishes an
/// operation; so it needs no lock (and is not `Sendable`).
final class RunnerHandoff {
    /// The operation to run next, and its own pool (where it goes if the runner cannot run it).
    var next: (operation: AsyncOperation, pool: RunnerPool)?
    /// External operations made ready and launched meanwhile, to start once the finish is complete
    /// (``ExternalOperation``; `startExternalOperations()`), in order. (Usually one, kept inline: no
    /// array is allocated for it.)
    var externalStarts = InlineList<AsyncOperation>()

    /// Takes `operation` (of `pool`) to run next, if nothing was handed over yet.
    func offer(_ operation: AsyncOperation, pool: RunnerPool) -> Bool {
        guard next == nil else { return false }
        next = (operation, pool)
        return true
    }
}
