import Runtime

/// Serializes changes to the dependency graph so that the cycle check and the insertion of an edge are
/// atomic across all operations. Lock order: `graphLock`, then one operation's lock at a time.
/// The hot paths (finishing, readiness) never take it.
let graphLock = LockedValue<UInt8>(0)  // (a zero-sized value would share its address with the mutex)

extension AsyncOperation {
    /// The operations this one waits for, in the order they were added (read-only; use
    /// ``addDependency(_:policy:)`` and ``removeDependency(_:)``). Dependencies are kept after the
    /// operation finishes, so `execute()` can look among them, for example for any that provides an
    /// image (`dependencies.compactMap { ($0 as? ImageDataProvider)?.image }.first`).
    public var dependencies: [AsyncOperation] {
        core.withLock { s in s.edges.compactMap { $0.removed ? nil : $0.operation } }
    }

    /// Makes this operation wait until `dependency` has finished.
    ///
    /// Call it before this operation becomes ready (in practice: before enqueueing it, or while it waits
    /// for other dependencies). Edges may cross queues and groups. The dependency may already be finished.
    /// Adding the same plain dependency twice does nothing (except that `.requireSuccess` upgrades an
    /// earlier `.afterCompletion` edge).
    ///
    /// - Parameters:
    ///   - dependency: the operation to wait for.
    ///   - policy: ``DependencyPolicy/afterCompletion`` (default) runs this operation whatever happened to
    ///     the dependency; ``DependencyPolicy/requireSuccess`` cancels it with a ``DependencyFailedError``
    ///     if the dependency is cancelled or fails.
    /// - Throws: ``DependencyCycleError`` naming the cycle if the edge would close one (nothing is
    ///   changed), or ``OperationUsageError/alreadyStarted(operation:)``.
    public func addDependency(_ dependency: AsyncOperation, policy: DependencyPolicy = .afterCompletion) throws {
        try addEdge(to: dependency, policy: policy, injection: nil)
    }

    /// Removes every edge from this operation to `dependency`. Does nothing if there is none, or once this
    /// operation has become ready or started. Removing the last unfinished dependency of an enqueued
    /// operation makes it ready.
    public func removeDependency(_ dependency: AsyncOperation) {
        let ready = graphLock.withLock { _ -> (WorkQueue, OperationPriority)? in
            let result = core.withLock { s -> (removed: Bool, ready: (WorkQueue, OperationPriority)?) in
                guard s.state == .pending, !s.launched else { return (false, nil) }
                var removed = false
                for index in s.edges.indices(where: { $0.operation === dependency }) {
                    let unsatisfied = s.edges.update(at: index) { edge -> Bool? in
                        guard !edge.removed else { return nil }
                        edge.removed = true
                        edge.injection = nil
                        return !edge.satisfied
                    }
                    guard let unsatisfied else { continue }
                    if unsatisfied { s.unsatisfied -= 1 }
                    removed = true
                }
                guard removed else { return (false, nil) }
                if s.unsatisfied == 0, s.stop == nil, let queue = s.queue {
                    s.state = .ready
                    return (true, (queue, s.priority))
                }
                return (true, nil)
            }
            if result.removed {
                dependency.core.withLock { s in s.dependents.removeAll { $0.operation === self } }
            }
            return result.ready
        }
        if let (queue, priority) = ready { queue.enqueueReady(self, priority: priority) }
    }

    /// Adds an edge, optionally with an injection step; the common path of dependencies and injection.
    func addEdge(to dependency: AsyncOperation, policy: DependencyPolicy, injection: Injection?) throws {
        if dependency === self {
            throw DependencyCycleError(cycle: [name, name], operationIDs: [id, id])
        }
        // Every change to the graph (edges, dependents, parents) happens under graphLock, so a cycle check
        // never misses an edge being added at the same time.
        let finished = try graphLock.withLock { _ -> (slot: Int, state: OperationState, errors: [any Error])? in
            enum Step {
                case started, duplicate
                case added(Int)
                case checkCycle
            }
            let step = core.withLock { s -> Step in
                guard s.state == .pending, !s.launched else { return .started }
                if injection == nil && s.absorbsDuplicateEdge(to: dependency, policy: policy) { return .duplicate }
                // Nothing waits for this operation: the new edge cannot close a cycle.
                if s.dependents.isEmpty && s.parent == nil {
                    return .added(s.appendEdge(to: dependency, policy: policy, injection: injection))
                }
                return .checkCycle
            }
            let slot: Int
            switch step {
            case .started:
                throw OperationUsageError.alreadyStarted(operation: name)
            case .duplicate:
                return nil
            case .added(let added):
                slot = added
            case .checkCycle:
                if let cycle = AsyncOperation.findCycle(dependent: self, dependency: dependency) {
                    throw DependencyCycleError(cycle: cycle.map(\.name), operationIDs: cycle.map(\.id))
                }
                let added = core.withLock { s -> Int? in
                    guard s.state == .pending, !s.launched else { return nil }
                    return s.appendEdge(to: dependency, policy: policy, injection: injection)
                }
                guard let added else { throw OperationUsageError.alreadyStarted(operation: name) }
                slot = added
            }
            return dependency.core.withLock { s in
                if s.state.isTerminal { return (slot, s.state, s.errors) }
                s.dependents.append(DependentLink(operation: self, slot: slot))
                return nil
            }
        }
        if let finished,
            let pending = dependencyDidFinish(
                slot: finished.slot, dependency: dependency, state: finished.state, errors: finished.errors)
        {
            AsyncOperation.finishAll(pending)
        }
    }

    /// Called by a dependency when it finishes. Runs the injection (outside any lock), then counts the
    /// edge as satisfied; returns the dependent's own cancellation if the edge's policy demands it.
    /// `dependencyParent` is the group the dependency belonged to: a cancellation that a sibling's failure
    /// causes is not recorded again by the group (the sibling's error is).
    func dependencyDidFinish(
        slot: Int, dependency: AsyncOperation, state: OperationState, errors: [any Error],
        dependencyParent: GroupOperation? = nil, handoff: RunnerHandoff? = nil
    ) -> PendingFinish? {
        enum Step {
            case ignore
            case ready(WorkQueue, OperationPriority)
            case satisfied
            case inject(Injection)
            case cancel(Injection?, sibling: Bool)
        }
        let mustSucceed = state != .finished
        let step = core.withLock { s -> Step in
            guard slot < s.edges.count else { return .ignore }
            let edge = s.edges.update(at: slot) { edge -> (policy: DependencyPolicy, injection: Injection?)? in
                guard edge.operation === dependency, !edge.removed, !edge.satisfied else { return nil }
                edge.satisfied = true
                return (edge.policy, edge.injection.take())
            }
            guard let (policy, injection) = edge else { return .ignore }
            if mustSucceed && policy == .requireSuccess {
                return .cancel(injection, sibling: dependencyParent != nil && s.parent === dependencyParent)
            }
            if let injection, !s.state.isTerminal { return .inject(injection) }
            // The common case, in one step: no injection to run, nothing to cancel.
            s.unsatisfied -= 1
            return s.becomeReadyIfSatisfied().map { .ready($0.0, $0.1) } ?? .satisfied
        }
        var cancelError: (any Error)?
        var sibling = false
        switch step {
        case .ignore, .satisfied:
            return nil
        case .ready(let queue, let priority):
            queue.enqueueReady(self, priority: priority, handoff: handoff)
            return nil
        case .cancel(let injection, let fromSibling):
            sibling = fromSibling
            let causes = rootCauses(errors)
            if injection != nil {
                cancelError = InjectionError.dependencyDidNotSucceed(
                    dependency: dependency.name, state: state, errors: causes)
            } else {
                cancelError = DependencyFailedError(
                    dependency: dependency.name, dependencyState: state, underlyingErrors: causes)
            }
        case .inject(let injection):
            do {
                try injection.deliver(self, dependency)
            } catch let error as InjectionError {
                cancelError = error
            } catch {
                cancelError = InjectionError.injectionFailed(dependency: dependency.name, error: error)
            }
        }
        if let cancelError {
            // The edge is counted as unsatisfied until the cancellation is recorded: otherwise another
            // dependency finishing meanwhile could make this operation ready, and it would start.
            var finish = requestCancel(errors: [cancelError])
            core.withLock { $0.unsatisfied -= 1 }
            finish?.causeRecordedBySibling = sibling
            return finish
        }
        let ready = core.withLock { s -> (WorkQueue, OperationPriority)? in
            s.unsatisfied -= 1
            return s.becomeReadyIfSatisfied()
        }
        if let (queue, priority) = ready { queue.enqueueReady(self, priority: priority, handoff: handoff) }
        return nil
    }

    /// Looks for a path `dependency → … → dependent` along unfinished "waits for" edges, searching
    /// forward from `dependency` and backward from `dependent` alternately, so the cost is bounded by
    /// twice the smaller of the two reachable sets (usually tiny: a fresh operation has no dependents).
    /// Returns the cycle `[dependent, dependency, …, dependent]`, or `nil`. Called under `graphLock`.
    static func findCycle(dependent: AsyncOperation, dependency: AsyncOperation) -> [AsyncOperation]? {
        // A group also waits for its children, so containment counts as an edge group → child.
        func forward(_ node: AsyncOperation) -> [AsyncOperation] {
            var next = node.core.withLock { s in
                s.state.isTerminal ? [] : s.edges.compactMap { ($0.removed || $0.satisfied) ? nil : $0.operation }
            }
            if let group = node as? GroupOperation { next += group.children }
            return next
        }
        func backward(_ node: AsyncOperation) -> [AsyncOperation] {
            node.core.withLock { s in
                if s.state.isTerminal { return [] }
                var previous = s.dependents.map(\.operation)
                if let parent = s.parent { previous.append(parent) }
                return previous
            }
        }
        // The common case first, without allocating: nothing waits for the dependent yet.
        let nothingWaits = dependent.core.withLock { s in s.dependents.isEmpty && s.parent == nil }
        if nothingWaits { return nil }
        let firstForward = forward(dependency)
        if firstForward.isEmpty { return nil }
        let firstBackward = backward(dependent)
        if firstBackward.isEmpty { return nil }

        // Forward tree: parentF[y] = x where x waits for y. Backward tree: parentB[y] = x where y waits for x.
        var parentF: [ObjectIdentifier: AsyncOperation] = [ObjectIdentifier(dependency): dependency]
        var parentB: [ObjectIdentifier: AsyncOperation] = [ObjectIdentifier(dependent): dependent]
        var frontierF: [AsyncOperation] = []
        var frontierB: [AsyncOperation] = []
        var headF = 0
        var headB = 0

        func pathForward(to end: AsyncOperation) -> [AsyncOperation] {
            // end … dependency, reversed: dependency … end
            var path = [end]
            var node = end
            while node !== dependency, let parent = parentF[ObjectIdentifier(node)] {
                path.append(parent)
                node = parent
            }
            return path.reversed()
        }
        func pathBackward(from start: AsyncOperation) -> [AsyncOperation] {
            // start waits for parentB[start] … waits for dependent
            var path = [start]
            var node = start
            while node !== dependent, let parent = parentB[ObjectIdentifier(node)] {
                path.append(parent)
                node = parent
            }
            return path
        }

        for next in firstForward where parentF[ObjectIdentifier(next)] == nil {
            parentF[ObjectIdentifier(next)] = dependency
            if next === dependent { return [dependent] + pathForward(to: next) }
            frontierF.append(next)
        }
        for next in firstBackward where parentB[ObjectIdentifier(next)] == nil {
            parentB[ObjectIdentifier(next)] = dependent
            if next === dependency { return [dependent] + pathBackward(from: next) }
            frontierB.append(next)
        }
        while headF < frontierF.count && headB < frontierB.count {
            let nodeF = frontierF[headF]
            headF += 1
            for next in forward(nodeF) where parentF[ObjectIdentifier(next)] == nil {
                parentF[ObjectIdentifier(next)] = nodeF
                if next === dependent { return [dependent] + pathForward(to: next) }
                frontierF.append(next)
            }
            let nodeB = frontierB[headB]
            headB += 1
            for next in backward(nodeB) where parentB[ObjectIdentifier(next)] == nil {
                parentB[ObjectIdentifier(next)] = nodeB
                if next === dependency { return [dependent] + pathBackward(from: next) }
                frontierB.append(next)
            }
        }
        return nil
    }

    /// The errors to carry when a dependency did not succeed: a dependency that was itself cancelled because
    /// of *its* dependency carries that root cause instead of a nested error, so a cascade down a long
    /// chain carries the original error, not a chain of wrappers.
    private func rootCauses(_ errors: [any Error]) -> [any Error] {
        errors.flatMap { error -> [any Error] in
            if let failure = error as? DependencyFailedError { return failure.underlyingErrors }
            if case .dependencyDidNotSucceed(_, _, let causes)? = error as? InjectionError { return causes }
            return [error]
        }
    }
}

/// A dependency edge stored in the dependent. Slots are never reused, so a dependency can notify its
/// dependent by slot index in O(1).
struct DependencyEdge {
    let operation: AsyncOperation
    var policy: DependencyPolicy
    var injection: Injection?
    var satisfied: Bool
    var removed: Bool
}

/// A result-injection step run when the dependency has finished and before the dependent may start.
/// (A class, so that an edge stores one reference, not a closure.)
final class Injection: Sendable {
    let deliver: @Sendable (_ dependent: AsyncOperation, _ dependency: AsyncOperation) throws -> Void

    init(_ deliver: @escaping @Sendable (_ dependent: AsyncOperation, _ dependency: AsyncOperation) throws -> Void) {
        self.deliver = deliver
    }
}

/// A link stored in the dependency: "this dependent waits for me through its edge `slot`".
struct DependentLink {
    let operation: AsyncOperation
    let slot: Int
}

extension OperationCore {
    /// Appends an edge and returns its slot.
    mutating func appendEdge(to dependency: AsyncOperation, policy: DependencyPolicy, injection: Injection?) -> Int {
        edges.append(
            DependencyEdge(
                operation: dependency, policy: policy, injection: injection, satisfied: false, removed: false))
        unsatisfied += 1
        if injection != nil { hasInjections = true }
        return edges.count - 1
    }

    /// `true` if a plain edge to `dependency` exists already and makes a new one useless: the same plain
    /// edge twice is one edge, and a second one that requires success upgrades an unsatisfied first one.
    /// (Only the first 64 edges are compared, which keeps wide fan-ins linear.)
    mutating func absorbsDuplicateEdge(to dependency: AsyncOperation, policy: DependencyPolicy) -> Bool {
        guard edges.count <= 64 else { return false }
        for index in edges.indices(where: { $0.operation === dependency }) {
            let absorbed = edges.update(at: index) { edge -> Bool in
                guard !edge.removed, edge.injection == nil else { return false }
                if edge.policy == policy || policy == .afterCompletion { return true }
                guard !edge.satisfied else { return false }
                edge.policy = policy
                return true
            }
            if absorbed { return true }
        }
        return false
    }

    /// Moves an enqueued operation whose dependencies have all finished to ready; returns its queue.
    mutating func becomeReadyIfSatisfied() -> (WorkQueue, OperationPriority)? {
        guard unsatisfied == 0, state == .pending, stop == nil, let queue else { return nil }
        state = .ready
        return (queue, priority)
    }
}
