// Cancelling an operation: the public `cancel(error:)` and how a cancellation reaches an operation that
// has not started (finished at once) or a running one (its task is cancelled).

extension AsyncOperation {
    /// Cancels the operation. The first call wins; later calls, and calls after the operation finished,
    /// do nothing.
    ///
    /// An operation that has not started finishes at once as ``OperationState/cancelled``; a running one
    /// has the task running its `execute()` cancelled and finishes as cancelled when `execute()` returns.
    /// `error`, if given, becomes the operation's ``errors`` and is passed to observers. A group cancels
    /// all of its children with the same error.
    public func cancel(error: (any Error)? = nil) {
        if let pending = requestCancel(errors: error.map { [$0] } ?? []) {
            AsyncOperation.finishAll(pending)
        }
    }

    /// Records the cancellation and cancels the task running the operation, if any; returns the finish to
    /// perform for an operation that is not executing yet.
    ///
    /// An operation that has not started `execute()` (not enqueued, waiting for dependencies, a queue slot
    /// or a runner, or evaluating its conditions) finishes at once: a condition that ignores cancellation
    /// cannot hold it up (its task is cancelled and its answer ignored). An executing one finishes when
    /// `execute()` returns.
    func requestCancel(errors: [any Error]) -> PendingFinish? {
        let decision = core.withLock {
            s -> (finishNow: Bool, runner: OperationRunner?, observers: [any OperationObserver])? in
            if s.state.isTerminal || s.stop != nil { return nil }
            s.stop = .cancelled(errors)
            s.runner?.cancellationWillBegin()
            return (s.state != .executing, s.runner, s.observers)
        }
        guard let decision else { return nil }
        for observer in decision.observers { observer.operationDidCancel(self, errors: errors) }
        cancellationRequested(errors: errors)
        decision.runner?.cancelTask()
        return decision.finishNow ? PendingFinish(operation: self, state: .cancelled, errors: errors) : nil
    }
}
