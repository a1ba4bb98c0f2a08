
/// An operation made of child operations, which run on the group's own ``childQueue`` once the group
/// executes. The group finishes after every child has finished, children added while it runs included.
///
/// - Children given at creation (``init(name:operations:maxConcurrentChildren:keepsRunningUntilClosed:)``)
///   and children added later with ``addChild(_:)``, for example from ``childDidFinish(_:)`` to branch on a
///   finished child's result. A child added while the group runs is started at once (subject to its
///   dependencies, which may be outside the group).
/// - Cancelling the group cancels every child (with the same error); the group then finishes as cancelled
///   once its running children have wound down. To cancel the group when one child is cancelled from
///   outside, observe the child:
///   `child.addObserver(BlockObserver(didCancel: { [weak group] _, _ in group?.cancel() }))`.
/// - The errors of failed children are collected in ``childErrors``; if there are any, the group finishes
///   as ``OperationState/failed`` with them as its ``AsyncOperation/errors``.
/// - A *long-lived* group (`keepsRunningUntilClosed: true`) does not finish when it momentarily has no
///   unfinished child: it waits for ``close()`` (or cancellation), then for its last child.
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
    ///     conditions before or after. A child that already belongs to a queue or group is not added; the
    ///     group then fails with ``OperationUsageError/alreadyEnqueued(operation:)`` when it executes.
    ///   - maxConcurrentChildren: the concurrency limit of ``childQueue``; no limit by default.
    ///   - keepsRunningUntilClosed: if `true`, the group keeps running when it has no unfinished child until
    ///     ``close()`` is called: a long-lived group fed with children over time.
    public init(
        name: String? = nil,
        operations: [AsyncOperation] = [],
        maxConcurrentChildren: Int = .max,
        keepsRunningUntilClosed: Bool = false
    ) {
        childQueue = WorkQueue(name: "\(name ?? "GroupOperation").children", maxConcurrentOperationCount: maxConcurrentChildren)
        group = LockedValue(GroupCore(keepsRunningUntilClosed: keepsRunningUntilClosed))
        super.init(name: name)
        for operation in operations {
            do {
                try addChild(operation)
            } catch {
                group.withLock { $0.setupErrors.append(error) }
            }
        }
    }

    /// Every child added so far, in order (finished ones included).
    public var children: [AsyncOperation] { group.withLock { $0.children } }

    /// The errors of the children that failed so far, in the order they finished.
    public var childErrors: [any Error] { group.withLock { $0.childErrors } }

    /// Adds a child. Before the group executes, the child is held; while the group executes, it is
    /// started at once; if the group was cancelled, the child is cancelled.
    /// - Throws: ``DependencyCycleError`` if the child (transitively) waits for the group, which would
    ///   deadlock; ``OperationUsageError/groupFinished(group:child:)`` if the group has finished (or its
    ///   last child has finished and it is completing), ``OperationUsageError/alreadyEnqueued(operation:)``
    ///   if the child belongs to a queue or group already.
    public func addChild(_ child: AsyncOperation) throws {
        if child === self {
            throw DependencyCycleError(cycle: [name, name], operationIDs: [id, id])
        }
        if let cycle = graphLock.withLock({ _ in AsyncOperation.findCycle(dependent: self, dependency: child) }) {
            throw DependencyCycleError(cycle: cycle.map(\.name), operationIDs: cycle.map(\.id))
        }
        let admitted = group.withLock { g -> Bool in
            if g.sealed { return false }
            g.unfinished += 1
            return true
        }
        guard admitted else { throw OperationUsageError.groupFinished(group: name, child: child.name) }
        let attach = child.core.withLock { s -> AttachResult in
            if s.queue != nil || s.parent != nil || s.launched { return .rejected }
            if s.state.isTerminal { return .terminal }
            s.parent = self
            return .pending
        }
        switch attach {
        case .rejected:
            childFinished(nil, state: .finished, errors: [])
            throw OperationUsageError.alreadyEnqueued(operation: child.name)
        case .terminal:
            group.withLock { $0.children.append(child) }
            childFinished(child, state: child.state, errors: child.errors)
            return
        case .pending, .ready:
            break
        }
        enum Next { case hold, start, cancel([any Error]) }
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

    /// Starts the children and waits for all of them (later ones included). Overrides must call it.
    open override func execute() async throws {
        let (toStart, setupErrors) = group.withLock { g -> ([AsyncOperation], [any Error]) in
            g.started = true
            return (g.children, g.setupErrors)
        }
        if !setupErrors.isEmpty {
            cancelChildren(errors: [])
            throw MultipleErrors(setupErrors)
        }
        for child in toStart { try? childQueue.enqueue(child, fromGroup: true) }
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
        for child in children { child.cancel(error: error) }
    }

    /// Called by a child (or by `addChild` for a rejected one, with `child == nil`) when it finished.
    func childFinished(_ child: AsyncOperation?, state: OperationState, errors: [any Error]) {
        if let child { childDidFinish(child) }
        let continuation = group.withLock { g -> CheckedContinuation<Void, Never>? in
            g.unfinished -= 1
            if state == .failed { g.childErrors.append(contentsOf: errors) }
            return g.takeContinuationIfDone()
        }
        continuation?.resume()
    }
}

/// The mutable state of a ``GroupOperation``, guarded by its lock.
struct GroupCore {
    var children: [AsyncOperation] = []
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

    init(keepsRunningUntilClosed: Bool) { self.keepsRunningUntilClosed = keepsRunningUntilClosed }

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
