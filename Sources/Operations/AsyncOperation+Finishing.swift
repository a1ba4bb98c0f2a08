// Finishing an operation, exactly once: the terminal state is committed under the operation's lock, then
// finish actions, observers, completion handlers, dependents, the parent group, the queue and the waiters
// are told, in that order, with no lock held.

extension AsyncOperation {
    /// Runs `action` when the operation finishes (used to release mutual-exclusion slots); at once if it
    /// has already finished.
    func addFinishAction(_ action: @escaping @Sendable () -> Void) {
        let runNow = core.withLock { s -> Bool in
            if s.state.isTerminal { return true }
            s.updateExtras { $0.hooks.finishActions.append(action) }
            return false
        }
        if runNow { action() }
    }

    func observersSnapshot() -> [any OperationObserver] { core.withLock { $0.observers } }

    /// Finishes `first` and, iteratively, every dependent that must be cancelled as a consequence (so a
    /// cancellation cascading down a long chain never recurses deeply).
    /// `handoff`, if given, belongs to the runner finishing the operation: a dependent that becomes ready
    /// may be handed to it, to run next.
    static func finishAll(_ first: PendingFinish, handoff: RunnerHandoff? = nil) {
        var cascade: [PendingFinish] = []  // (no allocation unless something cascades)
        first.operation.commitFinish(first, cascade: &cascade, handoff: handoff)
        while let item = cascade.popLast() {
            item.operation.commitFinish(item, cascade: &cascade, handoff: handoff)
        }
    }

    private func commitFinish(_ finish: PendingFinish, cascade: inout [PendingFinish], handoff: RunnerHandoff?) {
        var (final, errors) = (finish.state, finish.errors)
        var snapshot = FinishSnapshot()
        let committed = core.withLock { s -> Bool in
            guard !s.state.isTerminal, !finish.onlyIfExecuting || s.state == .executing else { return false }
            if finish.stopDecides, let stop = s.stop { (final, errors) = stop.outcome }
            s.state = final
            s.errors = errors
            snapshot.take(from: &s)
            return true
        }
        guard committed else { return }
        for dependency in snapshot.unfinishedDependencies {
            dependency.core.withLock { s in s.dependents.removeAll { $0.operation === self } }
        }
        for action in snapshot.hooks.finishActions { action() }
        for observer in snapshot.observers { observer.operationDidFinish(self, state: final, errors: errors) }
        for completion in snapshot.hooks.completions { completion(self) }
        for link in snapshot.dependents {
            if let next = link.operation.dependencyDidFinish(
                slot: link.slot, dependency: self, state: final, errors: errors, dependencyParent: snapshot.parent,
                handoff: handoff)
            {
                cascade.append(next)
            }
        }
        snapshot.parent?.childFinished(
            self, state: final, errors: errors, causeRecordedBySibling: finish.causeRecordedBySibling)
        snapshot.queue?.operationDidFinish(slot: snapshot.queueSlot, heldSlot: snapshot.holdsSlot, handoff: handoff)
        for waiter in snapshot.hooks.waiters { waiter.continuation.resume() }
    }
}

/// A finish to perform (see ``AsyncOperation/finishAll(_:runner:)``).
struct PendingFinish {
    let operation: AsyncOperation
    let state: OperationState
    let errors: [any Error]
    /// If a cancellation or timeout was recorded (``StopReason``), it decides the outcome instead: set
    /// when `execute()` or a condition ends, which may be because of that stop.
    var stopDecides = false
    /// The operation is cancelled because a sibling in its group, which it required, did not succeed: the
    /// group records the sibling's error, not this consequence.
    var causeRecordedBySibling = false
    /// Finish only an operation that executes (``ExternalOperation/finish(throwing:)``: not before its
    /// `start()`), checked under the lock that commits the finish.
    var onlyIfExecuting = false
}

/// What `commitFinish` moves out of a finishing operation's state, to act on without the lock.
struct FinishSnapshot {
    var dependents = InlineList<DependentLink>()
    var observers: [any OperationObserver] = []
    var hooks = FinishHooks()
    var queue: WorkQueue?
    var queueSlot = -1
    var holdsSlot = false
    var parent: GroupOperation?
    /// For an operation finished before its dependencies (cancelled): the ones still running, which must
    /// forget it so that they do not keep it alive.
    var unfinishedDependencies: [AsyncOperation] = []

    /// Moves what finishing acts on out of `state` (no copies), and drops what a finished operation no
    /// longer needs (conditions, runner, injection closures).
    mutating func take(from state: inout OperationCore) {
        swap(&dependents, &state.dependents)
        swap(&observers, &state.observers)
        if let extras = state.extras { swap(&hooks, &extras.hooks) }
        queue = state.queue.take()
        queueSlot = state.queueSlot
        holdsSlot = state.holdsSlot
        parent = state.parent.take()
        state.runner = nil
        state.extras?.conditions = []
        if state.hasInjections {
            for index in state.edges.indices { state.edges.update(at: index) { $0.injection = nil } }
            state.hasInjections = false
        }
        if state.unsatisfied > 0 {
            unfinishedDependencies = state.edges.compactMap { ($0.removed || $0.satisfied) ? nil : $0.operation }
        }
    }
}
