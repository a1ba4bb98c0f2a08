// Finishing an operation, exactly once: the terminal state is committed under the operation's lock, then
// finish actions, observers, completion handlers, dependents, the parent group, the queue and the waiters
// are told, in that order, with no lock held.

extension AsyncOperation {
    /// Runs `action` when the operation finishes (used to release mutual-exclusion slots); at once if it
    /// has already finished.
    func addFinishAction(_ action: @escaping @Sendable () -> Void) {
        let runNow = core.withLock { s -> Bool in
            if s.state.isTerminal { return true }
            s.finishActions.append(action)
            return false
        }
        if runNow { action() }
    }

    func observersSnapshot() -> [any OperationObserver] { core.withLock { $0.observers } }

    /// Finishes `first` and, iteratively, every dependent that must be cancelled as a consequence (so a
    /// cancellation cascading down a long chain never recurses deeply).
    /// `runner`, if given, is the task finishing the operation; it may take over a dependent that
    /// becomes ready.
    static func finishAll(_ first: PendingFinish, runner: OperationRunner? = nil) {
        var work = [first]
        while let item = work.popLast() {
            item.operation.commitFinish(state: item.state, errors: item.errors, cascade: &work, runner: runner)
        }
    }

    private func commitFinish(state final: OperationState, errors: [any Error], cascade: inout [PendingFinish], runner: OperationRunner?) {
        let snapshot = core.withLock { s -> FinishSnapshot? in
            guard !s.state.isTerminal else { return nil }
            s.state = final
            s.errors = errors
            var snapshot = FinishSnapshot(
                dependents: s.dependents, waiters: s.waiters, observers: s.observers,
                completions: s.completions, finishActions: s.finishActions, queue: s.queue,
                queueSlot: s.queueSlot, holdsSlot: s.holdsSlot, parent: s.parent
            )
            s.dependents = []
            s.waiters = []
            s.observers = []
            s.completions = []
            s.finishActions = []
            s.conditions = []
            s.queue = nil
            s.parent = nil
            s.runner = nil
            if s.hasInjections {
                for index in s.edges.indices { s.edges[index].injection = nil }
                s.hasInjections = false
            }
            if s.unsatisfied > 0 {
                // Finished early (cancelled): unlink from the dependencies still running, so that they do
                // not keep this operation alive.
                snapshot.unfinishedDependencies = s.edges.compactMap { ($0.removed || $0.satisfied) ? nil : $0.operation }
            }
            return snapshot
        }
        guard let snapshot else { return }
        for dependency in snapshot.unfinishedDependencies {
            dependency.core.withLock { s in s.dependents.removeAll { $0.operation === self } }
        }
        for action in snapshot.finishActions { action() }
        for observer in snapshot.observers { observer.operationDidFinish(self, state: final, errors: errors) }
        for completion in snapshot.completions { completion(self) }
        for link in snapshot.dependents {
            if let next = link.operation.dependencyDidFinish(slot: link.slot, dependency: self, state: final, errors: errors, runner: runner) {
                cascade.append(next)
            }
        }
        snapshot.parent?.childFinished(self, state: final, errors: errors)
        snapshot.queue?.operationDidFinish(slot: snapshot.queueSlot, heldSlot: snapshot.holdsSlot, runner: runner)
        for waiter in snapshot.waiters { waiter.1.resume() }
    }
}

/// A finish to perform (see ``AsyncOperation/finishAll(_:)``).
struct PendingFinish {
    let operation: AsyncOperation
    let state: OperationState
    let errors: [any Error]
}

/// What `commitFinish` takes out of the lock.
struct FinishSnapshot {
    let dependents: [DependentLink]
    let waiters: [(UInt64, CheckedContinuation<Void, Never>)]
    let observers: [any OperationObserver]
    let completions: [@Sendable (AsyncOperation) -> Void]
    let finishActions: [@Sendable () -> Void]
    let queue: WorkQueue?
    let queueSlot: Int
    let holdsSlot: Bool
    let parent: GroupOperation?
    var unfinishedDependencies: [AsyncOperation] = []
}
