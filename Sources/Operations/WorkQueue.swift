import Runtime

/// Runs ``AsyncOperation``s: the engine's counterpart of Foundation's `OperationQueue` (named
/// `WorkQueue` so it never clashes with Foundation's type).
///
/// An operation added to a queue starts when all its dependencies have finished (they may live in other
/// queues), a slot is free (``maxConcurrentOperationCount``) and its conditions hold. Among ready
/// operations waiting for a slot, higher ``OperationPriority`` first, then first-ready first-served.
/// An executing operation runs on a Swift task of its own for as long as it runs, but tasks are reused:
/// launched operations go to a pool of runners (`OperationRunner`, one pool per task priority, shared by
/// all queues), and a runner that finishes an operation takes the next one. The queue itself never blocks
/// a thread and has no actor: its bookkeeping sits behind one lock, held only for short steps.
///
/// ```swift
/// let queue = WorkQueue(name: "images", maxConcurrentOperationCount: 8)
/// try queue.addOperations([download, tiltShift])
/// await queue.waitUntilAllOperationsAreFinished()
/// ```
public final class WorkQueue: Sendable, CustomStringConvertible {
    /// The queue's name, for diagnostics.
    public let name: String
    private let core: LockedValue<QueueCore>

    /// Creates a queue.
    /// - Parameters:
    ///   - name: a name for diagnostics.
    ///   - maxConcurrentOperationCount: the most operations executing at once (at least 1). The default,
    ///     `Int.max`, means no limit, which suits operations that mostly wait (network, remote tasks); use a
    ///     small number for CPU-bound work. An operation that waits for a ``MutualExclusion`` slot holds
    ///     its queue slot meanwhile. A ``GroupOperation`` gives its slot back once it has started its
    ///     children (they run on its own ``GroupOperation/childQueue``), so a group never starves the
    ///     operations its children wait for; limit concurrent groups with a ``MutualExclusion`` if needed.
    public init(name: String = "WorkQueue", maxConcurrentOperationCount: Int = .max) {
        self.name = name
        core = LockedValue(QueueCore(maxConcurrent: max(1, maxConcurrentOperationCount)))
    }

    /// The most operations executing at once. Raising it starts waiting operations at once.
    public var maxConcurrentOperationCount: Int {
        get { core.withLock { $0.maxConcurrent } }
        set {
            core.withLock { $0.maxConcurrent = max(1, newValue) }
            drain(releasing: 0, startAll: true)
        }
    }

    /// The number of operations added to this queue that have not finished yet.
    public var operationCount: Int { core.withLock { $0.unfinished } }

    /// The operations added to this queue that have not finished yet, in no particular order.
    public var operations: [AsyncOperation] {
        core.withLock { $0.memberOperations() }.filter { !$0.isFinished }
    }

    /// A description with the name and counts, for logs.
    public var description: String {
        core.withLock { "WorkQueue(\(name), unfinished: \($0.unfinished), executing: \($0.running))" }
    }

    // MARK: - Adding

    /// Adds an operation. It starts once its dependencies have finished and a slot is free. An operation
    /// that has already finished (for example, cancelled before being added) is ignored.
    /// - Throws: ``OperationUsageError/alreadyEnqueued(operation:)`` if the operation was already given to
    ///   a queue or a group: an operation runs once.
    public func addOperation(_ operation: AsyncOperation) throws {
        try enqueue(operation, fromGroup: false)
    }

    /// Adds several operations, in order (see ``addOperation(_:)``). Stops at the first one that was
    /// already enqueued and throws; the ones before it stay added.
    public func addOperations(_ operations: [AsyncOperation]) throws {
        if let rejected = enqueue(contentsOf: operations, fromGroup: false) {
            throw OperationUsageError.alreadyEnqueued(operation: operations[rejected].name)
        }
    }

    /// Creates an ``AsyncBlockOperation`` from `block`, adds it and returns it.
    @discardableResult
    public func addOperation(
        name: String? = nil, priority: OperationPriority = .normal,
        _ block: @escaping @Sendable () async throws -> Void
    ) -> AsyncOperation {
        let operation = AsyncBlockOperation(name: name, priority: priority, block)
        // A fresh operation cannot have been enqueued elsewhere.
        try? enqueue(operation, fromGroup: false)
        return operation
    }

    func enqueue(_ operation: AsyncOperation, fromGroup: Bool) throws {
        let slot = core.withLock { s -> Int in
            s.unfinished += 1
            return s.addMember(.single(operation))
        }
        switch operation.attach(to: self, slot: slot, fromGroup: fromGroup) {
        case .rejected:
            operationDidFinish(slot: slot, heldSlot: false)
            throw OperationUsageError.alreadyEnqueued(operation: operation.name)
        case .terminal:
            operationDidFinish(slot: slot, heldSlot: false)
        case .pending:
            break
        case .ready(let priority, _):
            enqueueReady(operation, priority: priority)
        }
    }

    /// Enqueues `operations` in order, in a few steps for all of them (a group starting its children, a
    /// unit of work added at once). Stops at the first operation that is rejected (already given to a queue
    /// or group) and returns its index; the ones before it stay added.
    @discardableResult
    func enqueue(contentsOf operations: [AsyncOperation], fromGroup: Bool) -> Int? {
        guard !operations.isEmpty else { return nil }
        // One membership for all, and a running slot for each if the limit leaves room for all of them: then
        // an operation ready at once is launched while it is attached (the unused slots are given back below).
        let (slot, reserved) = core.withLock { s -> (Int, Bool) in
            s.unfinished += operations.count
            let slot = s.addMember(.batch(operations))
            guard s.maxConcurrent - s.running >= operations.count else { return (slot, false) }
            s.running += operations.count
            return (slot, true)
        }
        var launched = LaunchBatch(capacity: reserved ? operations.count : 0)
        var ready: [AsyncOperation] = []
        var readyPriorities: [OperationPriority] = []
        var released = 0
        var rejected: Int?
        for (index, operation) in operations.enumerated() {
            if rejected != nil {
                released += 1
                continue
            }
            switch operation.attach(to: self, slot: slot, fromGroup: fromGroup, launchIfReady: reserved) {
            case .rejected:
                rejected = index
                released += 1
            case .terminal:
                released += 1
            case .pending:
                break
            case .ready(let priority, launched: false):
                ready.append(operation)
                readyPriorities.append(priority)
            case .ready(let priority, launched: true):
                launched.append(operation, priority: priority)
            }
        }
        let unusedSlots = reserved ? operations.count - launched.count : 0
        let (waiters, granted, startWaiting) = core.withLock {
            s -> ([(UInt64, CheckedContinuation<Void, Never>)], Int, Bool) in
            if released > 0 { s.removeMember(slot, count: released) }
            s.unfinished -= released
            s.running -= unusedSlots
            // Without a reservation: the ready ones start while slots are free, in order; the others wait.
            var granted = 0
            for (operation, priority) in zip(ready, readyPriorities) {
                if s.running < s.maxConcurrent {
                    s.running += 1
                    granted += 1
                } else {
                    s.buckets[priority.rawValue].push(operation)
                    s.readyCount += 1
                }
            }
            return (s.takeWaitersIfIdle(), granted, unusedSlots > 0 && s.readyCount > 0)
        }
        for operation in ready[..<granted] {
            if let priority = operation.claimLaunch() {
                launched.append(operation, priority: priority)
            } else {
                drain(releasing: 1, startAll: false)
            }
        }
        launched.push()
        // Operations of other threads that waited while the slots were reserved.
        if startWaiting { drain(releasing: 0, startAll: true) }
        for waiter in waiters { waiter.1.resume() }
        return rejected
    }

    // MARK: - Cancelling and waiting

    /// Cancels every operation of the queue that has not finished (see ``AsyncOperation/cancel(error:)``).
    /// Operations added afterwards are not affected.
    public func cancelAll(error: (any Error)? = nil) {
        let snapshot = core.withLock { $0.memberOperations() }
        for operation in snapshot { operation.cancel(error: error) }
    }

    /// Suspends until every operation added to the queue has finished (returns at once if none is left).
    /// Never blocks a thread. Returns early, without waiting, if the waiting task is cancelled.
    public func waitUntilAllOperationsAreFinished() async {
        let waiterID = core.withLock { s -> UInt64 in
            s.nextWaiterID &+= 1
            return s.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = core.withLock { s -> Bool in
                    if s.unfinished == 0 || Task.isCancelled { return true }
                    s.waiters.append((waiterID, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = core.withLock { s -> CheckedContinuation<Void, Never>? in
                guard let index = s.waiters.firstIndex(where: { $0.0 == waiterID }) else { return nil }
                return s.waiters.remove(at: index).1
            }
            continuation?.resume()
        }
    }

    /// Like ``waitUntilAllOperationsAreFinished()``, but gives up after `timeout`.
    /// - Returns: `true` if every operation finished in time.
    public func waitUntilAllOperationsAreFinished(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitUntilAllOperationsAreFinished()
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first && operationCount == 0
        }
    }

    // MARK: - Scheduling

    /// Called by an operation that became ready.
    func enqueueReady(_ operation: AsyncOperation, priority: OperationPriority, handoff: RunnerHandoff? = nil) {
        let startNow = core.withLock { s -> Bool in
            if s.running < s.maxConcurrent {
                s.running += 1
                return true
            }
            s.buckets[priority.rawValue].push(operation)
            s.readyCount += 1
            return false
        }
        if startNow && !operation.launch(handoff: handoff) { drain(releasing: 1, startAll: false) }
    }

    /// Called by a running operation that gives its slot back early (a group waiting for its children).
    func slotReleased() { drain(releasing: 1, startAll: false) }

    /// Called by an operation of this queue when it finished.
    func operationDidFinish(slot: Int, heldSlot: Bool, handoff: RunnerHandoff? = nil) {
        let (waiters, next) = core.withLock { s -> ([(UInt64, CheckedContinuation<Void, Never>)], AsyncOperation?) in
            s.removeMember(slot)
            s.unfinished -= 1
            let waiters = s.takeWaitersIfIdle()
            var next: AsyncOperation?
            if heldSlot {
                s.running -= 1
                if s.running < s.maxConcurrent, let candidate = s.popReady() {
                    s.running += 1
                    next = candidate
                }
            }
            return (waiters, next)
        }
        if let next, !next.launch(handoff: handoff) { drain(releasing: 1, startAll: false) }
        for waiter in waiters { waiter.1.resume() }
    }

    /// Releases `releasing` slots and starts waiting operations while slots are free. Operations that
    /// finished (cancelled) while waiting are skipped. With `startAll == false` it stops after one
    /// successful start (enough when a single slot was released).
    private func drain(releasing: Int, startAll: Bool) {
        var release = releasing
        while true {
            let next = core.withLock { s -> AsyncOperation? in
                s.running -= release
                release = 0
                guard s.running < s.maxConcurrent, let candidate = s.popReady() else { return nil }
                s.running += 1
                return candidate
            }
            guard let next else { return }
            if next.launch(handoff: nil) {
                if !startAll { return }
            } else {
                release = 1
            }
        }
    }
}

/// Launched operations to hand to their runner pools in one step per pool (external operations without
/// conditions, or whose mutual exclusion has a slot for them: to start on this thread, see ``ExternalOperation``).
struct LaunchBatch {
    private var operations: [AsyncOperation] = []
    private var external: [AsyncOperation] = []
    private var pool: RunnerPool?
    private(set) var count = 0

    init(capacity: Int) { operations.reserveCapacity(capacity) }

    mutating func append(_ operation: AsyncOperation, priority: OperationPriority) {
        count += 1
        if operation.startsExternally {
            if operation.startsHere(priority: priority, handoff: nil) { external.append(operation) }
            return
        }
        let target = RunnerPool.pool(for: priority)
        if pool == nil { pool = target }
        if target === pool {
            operations.append(operation)
        } else {
            target.push(operation)  // (a batch of mixed priorities: rare)
        }
    }

    func push() {
        if let pool, !operations.isEmpty { pool.push(contentsOf: operations) }
        for operation in external { operation.startExternally() }
    }
}

/// The mutable state of a ``WorkQueue``, guarded by its lock.
struct QueueCore {
    var maxConcurrent: Int
    var running = 0
    var unfinished = 0
    var buckets = [OperationFIFO](repeating: OperationFIFO(), count: OperationPriority.allCases.count)
    var readyCount = 0
    /// The unfinished operations, for `cancelAll` and `operations`. Each operation remembers its slot, so
    /// removal is O(1); operations added together share one slot, so adding many costs one entry.
    var members: [Member?] = []
    var freeSlots: [Int] = []
    var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
    var nextWaiterID: UInt64 = 0

    /// One slot of ``members``: an operation added alone, or several added together.
    struct Member {
        var single: AsyncOperation?
        var batch: [AsyncOperation] = []
        /// How many of them have not finished.
        var remaining: Int

        static func single(_ operation: AsyncOperation) -> Member { Member(single: operation, remaining: 1) }
        static func batch(_ operations: [AsyncOperation]) -> Member {
            Member(batch: operations, remaining: operations.count)
        }
    }

    init(maxConcurrent: Int) { self.maxConcurrent = maxConcurrent }

    /// Records a member; returns its slot.
    mutating func addMember(_ member: Member) -> Int {
        if let free = freeSlots.popLast() {
            members[free] = member
            return free
        }
        members.append(member)
        return members.count - 1
    }

    /// Records that `count` operations of the member in `slot` finished (or were not added after all).
    mutating func removeMember(_ slot: Int, count: Int = 1) {
        guard slot >= 0 && slot < members.count else { return }
        members[slot]?.remaining -= count
        guard let remaining = members[slot]?.remaining, remaining <= 0 else { return }
        members[slot] = nil
        freeSlots.append(slot)
    }

    /// Every member operation (those of a batch whether finished or not: check `isFinished` if it matters).
    func memberOperations() -> [AsyncOperation] {
        var operations: [AsyncOperation] = []
        for case let member? in members {
            if let single = member.single { operations.append(single) }
            operations.append(contentsOf: member.batch)
        }
        return operations
    }

    /// The waiters to resume once no operation is left.
    mutating func takeWaitersIfIdle() -> [(UInt64, CheckedContinuation<Void, Never>)] {
        guard unfinished == 0 && !waiters.isEmpty else { return [] }
        defer { waiters = [] }
        return waiters
    }

    mutating func popReady() -> AsyncOperation? {
        guard readyCount > 0 else { return nil }
        for index in buckets.indices.reversed() where !buckets[index].isEmpty {
            if let operation = buckets[index].pop() {
                readyCount -= 1
                return operation
            }
        }
        return nil
    }
}
