
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
                for index in s.edges.indices where s.edges[index].operation === dependency && !s.edges[index].removed {
                    s.edges[index].removed = true
                    s.edges[index].injection = nil
                    if !s.edges[index].satisfied { s.unsatisfied -= 1 }
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
        let slot = try graphLock.withLock { _ -> Int? in
            let notStarted = core.withLock { s in s.state == .pending && !s.launched }
            guard notStarted else { throw OperationUsageError.alreadyStarted(operation: name) }
            if injection == nil {
                // The same plain edge twice is one edge; a second one that requires success upgrades an
                // unsatisfied first one.
                let duplicate = core.withLock { s -> Bool in
                    guard s.edges.count <= 64 else { return false }
                    for index in s.edges.indices {
                        let edge = s.edges[index]
                        guard edge.operation === dependency, !edge.removed, edge.injection == nil else { continue }
                        if edge.policy == policy || policy == .afterCompletion { return true }
                        if !edge.satisfied {
                            s.edges[index].policy = policy
                            return true
                        }
                    }
                    return false
                }
                if duplicate { return nil }
            }
            if let cycle = AsyncOperation.findCycle(dependent: self, dependency: dependency) {
                throw DependencyCycleError(cycle: cycle.map(\.name), operationIDs: cycle.map(\.id))
            }
            let slot = core.withLock { s -> Int? in
                guard s.state == .pending, !s.launched else { return nil }
                s.edges.append(DependencyEdge(operation: dependency, policy: policy, injection: injection, satisfied: false, removed: false))
                s.unsatisfied += 1
                if injection != nil { s.hasInjections = true }
                return s.edges.count - 1
            }
            guard let slot else { throw OperationUsageError.alreadyStarted(operation: name) }
            return slot
        }
        guard let slot else { return }
        let finished = dependency.core.withLock { s -> (OperationState, [any Error])? in
            if s.state.isTerminal { return (s.state, s.errors) }
            s.dependents.append(DependentLink(operation: self, slot: slot))
            return nil
        }
        if let (state, errors) = finished {
            if let pending = dependencyDidFinish(slot: slot, dependency: dependency, state: state, errors: errors) {
                AsyncOperation.finishAll(pending)
            }
        }
    }

    /// Called by a dependency when it finishes. Runs the injection (outside any lock), then counts the
    /// edge as satisfied; returns the dependent's own cancellation if the edge's policy demands it.
    func dependencyDidFinish(
        slot: Int, dependency: AsyncOperation, state: OperationState, errors: [any Error], runner: OperationRunner? = nil
    ) -> PendingFinish? {
        let edge = core.withLock { s -> (DependencyPolicy, Injection?)? in
            guard slot < s.edges.count, s.edges[slot].operation === dependency,
                !s.edges[slot].removed, !s.edges[slot].satisfied
            else { return nil }
            s.edges[slot].satisfied = true
            let injection = s.edges[slot].injection
            s.edges[slot].injection = nil
            return (s.edges[slot].policy, injection)
        }
        guard let (policy, injection) = edge else { return nil }
        var cancelError: (any Error)?
        if state != .finished && policy == .requireSuccess {
            let causes = rootCauses(errors)
            if injection != nil {
                cancelError = InjectionError.dependencyDidNotSucceed(dependency: dependency.name, state: state, errors: causes)
            } else {
                cancelError = DependencyFailedError(dependency: dependency.name, dependencyState: state, underlyingErrors: causes)
            }
        } else if let injection, !isFinished {
            do {
                try injection.deliver(self, dependency)
            } catch let error as InjectionError {
                cancelError = error
            } catch {
                cancelError = InjectionError.injectionFailed(dependency: dependency.name, error: error)
            }
        }
        let failed = cancelError != nil
        let ready = core.withLock { s -> (WorkQueue, OperationPriority)? in
            s.unsatisfied -= 1
            guard !failed, s.unsatisfied == 0, s.state == .pending, s.stop == nil, let queue = s.queue else { return nil }
            s.state = .ready
            return (queue, s.priority)
        }
        if let cancelError { return requestCancel(errors: [cancelError]) }
        if let (queue, priority) = ready { queue.enqueueReady(self, priority: priority, runner: runner) }
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
struct Injection: Sendable {
    /// `true` for ``ResultConsuming/injectResult(from:)``: a failed dependency yields an InjectionError.
    let automatic: Bool
    let deliver: @Sendable (_ dependent: AsyncOperation, _ dependency: AsyncOperation) throws -> Void
}

/// A link stored in the dependency: "this dependent waits for me through its edge `slot`".
struct DependentLink {
    let operation: AsyncOperation
    let slot: Int
}
