/// An operation whose work runs elsewhere (on another machine, another process, a thread of its own)
/// and that holds **no Swift task** while it waits for it: ``start()`` is a synchronous call that sets
/// the work going and returns, and whoever learns how the work ended calls ``finish(throwing:)``, which
/// finishes the operation synchronously on the caller's thread. (``CompletableOperation`` offers the
/// same as an `async` `execute()` that suspends a task per operation; this is the cheaper form for many
/// thousands of them at once.)
///
/// Everything else follows the engine's rules: dependencies, result injection, observers, completion
/// handlers, queue slots and priorities, groups, conditions (evaluated on a runner first, as for any
/// operation, since they may suspend).
///
/// Where ``start()`` runs: on the thread that launches the operation, as soon as it is ready and has a
/// queue slot, when it has no conditions; that is the thread that adds it to its queue, or the one that
/// finishes its last dependency (then after that finish is complete, not inside it), or a runner of the
/// engine. So keep `start()` short and non-blocking (post a request, send a message), and never call the
/// engine's waiting functions from it. An operation with conditions is started by the runner that
/// evaluated them.
///
/// Finishing: ``finish(throwing:)`` finishes it (without an error: ``OperationState/finished``; with a
/// `CancellationError`: ``OperationState/cancelled``; else ``OperationState/failed``). Its dependents that
/// this makes ready and that are external operations themselves start on the same thread right after,
/// so a chain of remote steps advances without any task switch; other dependents go to the runners.
/// The first finish wins; `finish` before `start()` was called, or after the operation finished, does
/// nothing.
///
/// Cancellation: cancelling an operation that has not started finishes it at once, as for any operation.
/// Cancelling one whose work runs calls ``cancelRunningWork()``, whose default finishes it at once as
/// cancelled (a late `finish` is then ignored); override it to withdraw the work first, or to finish only
/// once the work confirmed (it then finishes as cancelled however `finish` is called).
///
/// ``AsyncOperation/timeout`` and ``AsyncOperation/retryPolicy`` do not apply: the work's own side retries
/// and times out (as a cluster's coordinator does for its tasks).
// @unchecked: restated from AsyncOperation (Swift requires it); it adds no stored state.
open class ExternalOperation: AsyncOperation, @unchecked Sendable {
    /// Creates a pending operation (see ``AsyncOperation/init(name:priority:)``).
    public override init(name: String? = nil, priority: OperationPriority = .normal) {
        super.init(name: name, priority: priority)
    }

    /// Sets the work going; see the type's documentation for the thread it runs on. Throwing fails the
    /// operation with the error. The default does nothing (the operation waits for `finish`).
    open func start() throws {}

    /// Called once when the operation is cancelled while its work runs (``AsyncOperation/isCancelled`` is
    /// then `true`). The default finishes it at once, as cancelled.
    open func cancelRunningWork() {
        finish(throwing: CancellationError())
    }

    /// Finishes the operation with how its work ended: `nil`, success; a `CancellationError`, cancelled;
    /// any other error (or each of a ``MultipleErrors``), failed with it. A cancellation requested
    /// meanwhile decides instead (cancelled, with the cancellation's errors). Synchronous: observers,
    /// completion handlers, dependents, its group and its queue are told before it returns, and dependents
    /// that are external operations are started. Does nothing unless the operation's work runs (`start()`
    /// was called and it has not finished).
    public func finish(throwing error: (any Error)? = nil) {
        let outcome = error.map(AsyncOperation.outcome(of:)) ?? (.finished, [])
        let handoff = RunnerHandoff()
        // (Whether it executes is checked under the same lock that commits the finish.)
        AsyncOperation.finishAll(
            PendingFinish(
                operation: self, state: outcome.0, errors: outcome.1, stopDecides: true,
                onlyIfExecuting: true),
            handoff: handoff)
        handoff.startHandedOver()
    }

    override var startsExternally: Bool { true }

    override func startExternalWork() {
        do {
            try start()
        } catch {
            finish(throwing: error)
        }
    }

    override func cancellationRequested(errors: [any Error]) {
        // Only work that runs is this operation's to stop; one not started yet is finished by the engine.
        if core.withLock({ $0.state == .executing }) { cancelRunningWork() }
    }
}

extension AsyncOperation {
    /// Starts an external operation that has been launched (`claimLaunch`), here and now: it executes
    /// (its observers are told) and its `start()` runs. (A `finish` inside `start()` starts the dependents
    /// it makes ready before it returns.)
    func startExternally() {
        let observers = core.withLock { s -> [any OperationObserver]? in
            if s.state.isTerminal || s.stop != nil { return nil }
            s.state = .executing
            s.attempt = 1
            s.runner = nil  // nothing runs it: a cancellation goes to `cancellationRequested`
            return s.observers
        }
        guard let observers else { return }
        for observer in observers { observer.operationWillExecute(self) }
        startExternalWork()
    }
}

extension RunnerHandoff {
    /// Starts the external operations handed over (and those they hand over in turn, iteratively), and
    /// gives an operation offered to run next to its pool: whoever calls this is no runner.
    func startHandedOver() {
        startExternalOperations()
        if let next = next.take() { next.pool.push(next.operation) }
    }

    /// Starts the external operations handed over, in order, until none is left.
    func startExternalOperations() {
        var index = 0
        while index < externalStarts.count {
            let operation = externalStarts[index]
            index += 1
            operation.startExternally()
        }
        externalStarts = InlineList()
    }
}
