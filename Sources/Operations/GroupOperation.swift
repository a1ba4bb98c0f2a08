import Runtime

/// An operation made of child operations, which run on the group's own ``childQueue`` once the group
/// executes. The group finishes after every child has finished, children added while it runs included.
///
/// - Children given at creation (``init(name:operations:maxConcurrentChildren:keepsRunningUntilClosed:)``)
///   are added when the group starts executing, as in ProcedureKit: observers added after creation (in a
///   subclass's initializer, or in its `execute()` before it calls `super.execute()`) hear
///   `operation(_:didAddChild:)` for each of them, in order, on the group's task. Children added later with
///   ``addChild(_:)`` are announced when they are added, for example from ``childDidFinish(_:)`` to branch
///   on a finished child's result. A child added while the group runs is started at once (subject to its
///   dependencies, which may be outside the group).
/// - Cancelling the group cancels every child (with the same error), those not executing first (so a slot
///   a cancelled running child frees starts none of them); the group then finishes as cancelled
///   once its running children have wound down. To cancel the group when one child is cancelled from
///   outside, observe the child:
///   `child.addObserver(BlockObserver(didCancel: { [weak group] _, _ in group?.cancel() }))`.
/// - ``childErrors`` collects why children did not succeed: the errors of every child that failed, and of
///   every child cancelled *with* an error (a child cancelled from outside with a reason), as ProcedureKit
///   does. If there are any, the group finishes as ``OperationState/failed`` with them as its
///   ``AsyncOperation/errors``, so its caller sees that part of its work did not happen and why. Not
///   collected, because the cause is already known: the errors of children cancelled by the group's own
///   cancellation (the group finishes cancelled with its error), and those of children cancelled because a
///   sibling they required did not succeed (the sibling's error is collected). A child cancelled without
///   an error leaves nothing to collect.
/// - A *long-lived* group (`keepsRunningUntilClosed: true`) does not finish when it momentarily has no
///   unfinished child: it waits for ``close()`` (or cancellation), then for its last child.
/// - A group fed with many children over time can let go of the finished ones (`keepsFinishedChildren:
///   false`): they are dropped from ``children`` (in amortized constant time, once the group executes), so
///   that its memory follows its unfinished children, not every child it ever ran.
///
/// Subclasses that override ``execute()`` must call `try await super.execute()`: it starts the children and
/// waits for them. Once its children are started, the group gives its slot in its queue back: a waiting
/// group does not count against ``WorkQueue/maxConcurrentOperationCount``.
// @unchecked: restated from AsyncOperation (Swift requires it); every stored property is a `let` of a Sendable type.
open class GroupOperation: AsyncOperation, @unchecked Sendable {
    /// The queue on which the children run.
    public let childQueue: WorkQueue
    private let group: LockedValue<GroupCore>

    /// Creates a group.
    /// - Parameters:
    ///   - name: a name for diagnostics.
    ///   - operations: the children known at creation; configure their dependencies, observers and
    ///     conditions before or after. They are added (and announced to the group's observers) when the
    ///     group starts executing. A child that already belongs to a queue or group is not added; the
    ///     group then fails with ``OperationUsageError/alreadyEnqueued(operation:)`` when it executes.
    ///   - maxConcurrentChildren: the concurrency limit of ``childQueue``; no limit by default.
    ///   - keepsRunningUntilClosed: if `true`, the group keeps running when it has no unfinished child until
    ///     ``close()`` is called: a long-lived group fed with children over time.
    ///   - keepsFinishedChildren: if `false`, finished children are let go once the group executes: they
    ///     leave ``children`` (the group no longer keeps them alive).
    public init(
        name: String? = nil,
        operations: [AsyncOperation] = [],
        maxConcurrentChildren: Int = .max,
        keepsRunningUntilClosed: Bool = false,
        keepsFinishedChildren: Bool = true
    ) {
        childQueue = WorkQueue(
            name: "\(name ?? "GroupOperation").children", maxConcurrentOperationCount: maxConcurrentChildren)
        group = LockedValue(
            GroupCore(keepsRunningUntilClosed: keepsRunningUntilClosed, keepsFinishedChildren: keepsFinishedChildren))
        super.init(name: name)
        // Nothing can wait for a group being created, so no child can close a cycle: no cycle check, and one
        // lock per child.
        var children: [AsyncOperation] = []
        var finishedEarly: [AsyncOperation] = []
        var rejected: [any Error] = []
        children.reserveCapacity(operations.count)
        // Counted before they are attached: one may finish (be cancelled from elsewhere) at once.
        group.withLock { $0.unfinished = operations.count }
        for operation in operations {
            let attach = operation.core.withLock { s -> AttachResult in
                if s.queue != nil || s.parent != nil || s.launched { return .rejected }
                if s.state.isTerminal { return .terminal }
                s.parent = self
                return .pending
            }
            switch attach {
            case .rejected:
                rejected.append(OperationUsageError.alreadyEnqueued(operation: operation.name))
                continue
            case .terminal:
                finishedEarly.append(operation)
            case .pending, .ready:
                break
            }
            children.append(operation)
        }
        group.withLock { g in
            g.unfinished -= rejected.count
            g.unannounced = children.count
            g.children = children
            g.setupErrors = rejected
        }
        // A child that had finished before it was given counts as finished at once.
        for child in finishedEarly { childFinished(child, state: child.state, errors: child.errors) }
    }

    /// Every child added so far, in order (finished ones included, unless the group was made with
    /// `keepsFinishedChildren: false`); the children given at creation from the start.
    public var children: [AsyncOperation] { group.withLock { $0.children } }

    /// Why children did not succeed so far, in the order they finished: the errors of failed children and
    /// of children cancelled with an error (see the type's documentation for what is left out).
    public var childErrors: [any Error] { group.withLock { $0.childErrors } }

    /// Adds a child and announces it to the group's observers. Before the group executes, the child is
    /// held; while the group executes, it is started at once; if the group was cancelled, the child is
    /// cancelled.
    /// - Throws: ``DependencyCycleError`` if the child (transitively) waits for the group, which would
    ///   deadlock; ``OperationUsageError/groupFinished(group:child:)`` if the group has finished (or its
    ///   last child has finished and it is completing), ``OperationUsageError/alreadyEnqueued(operation:)``
    ///   if the child belongs to a queue or group already.
    public func addChild(_ child: AsyncOperation) throws {
        if child === self {
            throw DependencyCycleError(cycle: [name, name], operationIDs: [id, id])
        }
        let admitted = group.withLock { g -> Bool in
            if g.sealed { return false }
            g.unfinished += 1
            return true
        }
        guard admitted else { throw OperationUsageError.groupFinished(group: name, child: child.name) }
        // The cycle check and the new containment edge are one step of the graph (see `addEdge`).
        let attach: AttachResult
        do {
            attach = try graphLock.withLock { _ -> AttachResult in
                if let cycle = AsyncOperation.findCycle(dependent: self, dependency: child) {
                    throw DependencyCycleError(cycle: cycle.map(\.name), operationIDs: cycle.map(\.id))
                }
                return child.core.withLock { s -> AttachResult in
                    if s.queue != nil || s.parent != nil || s.launched { return .rejected }
                    if s.state.isTerminal { return .terminal }
                    s.parent = self
                    return .pending
                }
            }
        } catch {
            childFinished(nil, state: .finished, errors: [], causeRecordedBySibling: false)
            throw error
        }
        switch attach {
        case .rejected:
            childFinished(nil, state: .finished, errors: [], causeRecordedBySibling: false)
            throw OperationUsageError.alreadyEnqueued(operation: child.name)
        case .terminal:
            group.withLock { $0.children.append(child) }
            childFinished(child, state: child.state, errors: child.errors, causeRecordedBySibling: false)
            return
        case .pending, .ready:
            break
        }
        enum Next {
            case hold, start
            case cancel([any Error])
        }
        let next = group.withLock { g -> Next in
            g.children.append(child)
            if let errors = g.cancelled { return .cancel(errors) }
            return g.started ? .start : .hold
        }
        for observer in observersSnapshot() { observer.operation(self, didAddChild: child) }
        switch next {
        case .hold:
            break
        case .start:
            try? childQueue.enqueue(child, fromGroup: true)
        case .cancel(let errors):
            child.cancel(error: errors.first)
        }
    }

    /// Adds several children in order (see ``addChild(_:)``).
    public func addChildren(_ children: [AsyncOperation]) throws {
        for child in children { try addChild(child) }
    }

    /// Lets a long-lived group (`keepsRunningUntilClosed: true`) finish once its unfinished children have
    /// finished. Children may still be added until then. Does nothing for other groups.
    public func close() {
        let continuation = group.withLock { g -> CheckedContinuation<Void, Never>? in
            g.closed = true
            return g.takeContinuationIfDone()
        }
        continuation?.resume()
    }

    /// Called each time a child finishes, before the group counts it as finished, on the thread that
    /// finished the child. Override it to inspect the child's result and add more children (branching);
    /// the default implementation does nothing. Children added here keep the group running.
    open func childDidFinish(_ child: AsyncOperation) {}

    /// Adds the children given at creation (announcing them to the observers), starts every child held so
    /// far and waits for all of them (later ones included). Overrides must call it.
    open override func execute() async throws {
        let (children, initial, setupErrors) = group.withLock { g -> ([AsyncOperation], Int, [any Error]) in
            g.started = true
            let initial = g.unannounced
            g.unannounced = 0
            return (g.children, initial, g.setupErrors)
        }
        let observers = observersSnapshot()
        if !observers.isEmpty {
            for child in children[..<initial] {
                for observer in observers { observer.operation(self, didAddChild: child) }
            }
        }
        if !setupErrors.isEmpty {
            cancelChildren(errors: [])
            throw MultipleErrors(setupErrors)
        }
        childQueue.enqueue(contentsOf: children, fromGroup: true)
        // The group only waits from now on: its slot in its own queue goes to other operations (which its
        // children may depend on).
        releaseQueueSlot()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = group.withLock { g -> Bool in
                    if g.isDone {
                        g.sealed = true
                        return true
                    }
                    g.continuation = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            self.cancelChildren(errors: [])
        }
        let (cancelled, errors) = group.withLock { ($0.cancelled, $0.childErrors) }
        if cancelled != nil { throw CancellationError() }
        if !errors.isEmpty { throw MultipleErrors(errors) }
    }

    override func cancellationRequested(errors: [any Error]) {
        cancelChildren(errors: errors)
    }

    private func cancelChildren(errors: [any Error]) {
        let (children, continuation) = group.withLock { g -> ([AsyncOperation], CheckedContinuation<Void, Never>?) in
            if g.cancelled == nil { g.cancelled = errors }
            return (g.children, g.takeContinuationIfDone())
        }
        continuation?.resume()
        let error = errors.first
        // Those not executing first (waiting for the window, a mutual exclusion, a dependency): cancelling
        // a running child frees its window slot and its exclusion's slot, which would otherwise start a
        // waiting child of this group for a moment before the loop reached it.
        var executing: [AsyncOperation] = []
        for child in children {
            if child.isExecuting { executing.append(child) } else { child.cancel(error: error) }
        }
        for child in executing { child.cancel(error: error) }
    }

    /// Called by a child (or by `addChild` for a rejected one, with `child == nil`) when it finished.
    func childFinished(
        _ child: AsyncOperation?, state: OperationState, errors: [any Error], causeRecordedBySibling: Bool = false
    ) {
        if let child { childDidFinish(child) }
        let recorded = !errors.isEmpty && (state == .failed || (state == .cancelled && !causeRecordedBySibling))
        let continuation = group.withLock { g -> CheckedContinuation<Void, Never>? in
            g.unfinished -= 1
            g.dropFinishedChildren()
            // Once the group is cancelled, its children are cancelled with its own error: nothing new.
            if recorded && (state == .failed || g.cancelled == nil) { g.childErrors.append(contentsOf: errors) }
            return g.takeContinuationIfDone()
        }
        continuation?.resume()
    }
}

/// The mutable state of a ``GroupOperation``, guarded by its lock.
struct GroupCore {
    var children: [AsyncOperation] = []
    /// `children[..<unannounced]` were given at creation; they are announced to the observers when the
    /// group executes.
    var unannounced = 0
    var unfinished = 0
    var started = false
    /// Set once the group has decided to finish; no child can be added afterwards.
    var sealed = false
    var closed = false
    let keepsRunningUntilClosed: Bool
    var cancelled: [any Error]?
    var childErrors: [any Error] = []
    var setupErrors: [any Error] = []
    var continuation: CheckedContinuation<Void, Never>?
    let keepsFinishedChildren: Bool

    init(keepsRunningUntilClosed: Bool, keepsFinishedChildren: Bool = true) {
        self.keepsRunningUntilClosed = keepsRunningUntilClosed
        self.keepsFinishedChildren = keepsFinishedChildren
    }

    /// Lets go of the finished children unless they are kept: once `children` is twice as long as the
    /// unfinished ones (at least 64), the finished ones leave it together, so each child costs amortized
    /// constant time. Not before the group started, while `children[..<unannounced]` are still to be
    /// announced. Reads each child's state under the group's lock (lock order: group, then child; a child
    /// never takes its group's lock under its own).
    mutating func dropFinishedChildren() {
        guard !keepsFinishedChildren, started, children.count >= 2 * max(unfinished, 32) else { return }
        children.removeAll { $0.isFinished }
    }

    var isDone: Bool {
        unfinished == 0 && (!keepsRunningUntilClosed || closed || cancelled != nil)
    }

    mutating func takeContinuationIfDone() -> CheckedContinuation<Void, Never>? {
        guard started, isDone, let continuation else { return nil }
        sealed = true
        self.continuation = nil
        return continuation
    }
}
