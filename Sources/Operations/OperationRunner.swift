/// A Swift task that runs operations, one after another (internal; it used to be called `Worker`, a name
/// the cluster uses for its worker processes): when an operation finishes and makes a dependent
/// ready, the same task runs that dependent next instead of a new task being created (the cheap path for
/// chains). A cancellation of the operation it runs cancels the task; a cancelled task, or one with a
/// cancellation in flight, is never reused.
final class OperationRunner: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var next: AsyncOperation?
        /// A cancellation arrived before the task handle was attached.
        var cancelRequested = false
        /// Cancellations that have decided to cancel this task but may not have done it yet.
        var cancellationsInFlight = 0
    }

    // Lock order: an operation's lock, then a runner's lock (never the other way round).
    private let state = LockedValue(State())

    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { s -> Bool in
            s.task = task
            return s.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    /// Drops the task handle (which refers back to this runner) when the task ends.
    func detach() { state.withLock { $0.task = nil } }

    /// Takes `operation` to run next, if the runner has no other one yet.
    func offer(_ operation: AsyncOperation) -> Bool {
        state.withLock { s in
            guard s.next == nil else { return false }
            s.next = operation
            return true
        }
    }

    func takeNext() -> AsyncOperation? {
        state.withLock { s in
            let next = s.next
            s.next = nil
            return next
        }
    }

    /// Called under the operation's lock before `cancelTask()`, so that the runner, which checks
    /// ``hasCancellationInFlight`` after the operation finished (under the same lock), never reuses a
    /// task that is about to be cancelled.
    func cancellationWillBegin() { state.withLock { $0.cancellationsInFlight += 1 } }

    func cancelTask() {
        let task = state.withLock { s -> Task<Void, Never>? in
            if s.task == nil { s.cancelRequested = true }
            return s.task
        }
        task?.cancel()
        state.withLock { $0.cancellationsInFlight -= 1 }
    }

    var hasCancellationInFlight: Bool { state.withLock { $0.cancellationsInFlight > 0 } }
}
