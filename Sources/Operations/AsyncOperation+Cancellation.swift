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

    /// Records the cancellation; returns the finish to perform for an operation that has not started.
    func requestCancel(errors: [any Error]) -> PendingFinish? {
        enum Action { case none, finishNow, cancelTask(OperationRunner?) }
        let (action, observers) = core.withLock { s -> (Action, [any OperationObserver]) in
            if s.state.isTerminal || s.stop != nil { return (.none, []) }
            s.stop = .cancelled(errors)
            if !s.launched { return (.finishNow, s.observers) }
            s.runner?.cancellationWillBegin()
            return (.cancelTask(s.runner), s.observers)
        }
        switch action {
        case .none:
            return nil
        case .finishNow:
            for observer in observers { observer.operationDidCancel(self, errors: errors) }
            cancellationRequested(errors: errors)
            return PendingFinish(operation: self, state: .cancelled, errors: errors)
        case .cancelTask(let runner):
            for observer in observers { observer.operationDidCancel(self, errors: errors) }
            cancellationRequested(errors: errors)
            runner?.cancelTask()
            return nil
        }
    }
}
