import DequeModule
import Runtime

/// A condition that lets at most `limit` operations of the same `category` execute at once, process-wide
/// (the seeds' `MutuallyExclusive`; with `limit > 1`, for example "at most 4 downloads per host").
///
/// The slot is taken when the operation starts (after its dependencies, never at enqueue) and released
/// when it finishes, however it finishes. Waiting suspends the operation's task without blocking a thread
/// (an ``ExternalOperation`` whose only condition this is waits with no task at all, and the release that
/// grants it a slot starts it);
/// waiters are served first-come first-served within their `group`, and groups take turns (one grant
/// each), so that many waiters of one group do not hold back a later group; a waiting operation can be
/// cancelled. An operation with
/// several exclusions acquires them in category order, so two operations cannot deadlock on each other's
/// categories. While it waits it holds its ``WorkQueue`` slot.
public struct MutualExclusion: OperationCondition {
    /// The category; operations with equal categories exclude each other.
    public let category: String
    /// How many operations of the category may execute at once (at least 1).
    public let limit: Int
    /// Waiters of one group are served in order; groups take turns ("": the group of all that name none).
    public let group: String

    /// A name for diagnostics, e.g. `MutualExclusion(download:example.com, limit: 4)`.
    public var name: String { "MutualExclusion(\(category), limit: \(limit))" }

    /// Creates an exclusion on `category`. Waiters of different `group`s take turns for a free slot (for
    /// example the batches downloading from one host); within a group, first come first served.
    public init(category: String, limit: Int = 1, group: String = "") {
        self.category = category
        self.limit = max(1, limit)
        self.group = group
    }

    /// Creates an exclusion whose category is a type's name, e.g. `MutualExclusion(LoginOperation.self)`.
    public init<T>(_ type: T.Type, limit: Int = 1) {
        self.init(category: String(reflecting: type), limit: limit)
    }

    /// Waits for a slot of the category, then registers its release for when `operation` finishes.
    public func evaluate(for operation: AsyncOperation) async throws {
        let category = self.category
        try await ExclusivityController.shared.acquire(category: category, limit: limit, group: group)
        operation.addFinishAction { ExclusivityController.shared.release(category: category) }
    }

    /// For an external operation whose only condition this is (`AsyncOperation.launch`): takes a slot for
    /// it now and returns `true` (the caller starts it), or queues it with the other waiters and returns
    /// `false`: the release that grants it a slot starts it then, on its own thread, without a runner.
    /// Either way the slot is released when the operation finishes.
    func acquireOrQueue(_ operation: AsyncOperation) -> Bool {
        let category = self.category
        guard ExclusivityController.shared.acquireOrQueue(operation, category: category, limit: limit, group: group)
        else {
            return false
        }
        operation.addFinishAction { ExclusivityController.shared.release(category: category) }
        return true
    }

    /// The number of operations currently holding a slot of `category` (for diagnostics and tests).
    public static func holders(of category: String) -> Int {
        ExclusivityController.shared.holders(of: category)
    }

    /// The number of operations waiting for a slot of `category` (for diagnostics and tests).
    public static func waiters(of category: String) -> Int {
        ExclusivityController.shared.waiters(of: category)
    }
}

/// The process-wide counters and waiters of the mutual-exclusion categories: per category, a FIFO of
/// waiters per group, and the groups with waiters in turn.
///
/// A category is taken out of `categories` while it is changed and put back after: changed in a copy
/// still stored in the dictionary, its waiters' storage would be shared and copied whole at every
/// change (a coordinator with 50,000 downloads waiting for one origin's cap spent half its CPU copying
/// them: docs/benchmarks.md, "Photos at scale").
///
/// A waiter is a suspended condition evaluation (resumed on Swift's pool when granted), or an external
/// operation queued by `acquireOrQueue` (started by the granting release, on its thread: no runner, no
/// hop). A waiter cancelled while it waits leaves at once, in O(1): a queued operation that finishes
/// (cancelled) is taken out by its finish action, so the controller lets go of it then and `waiters(of:)`
/// no longer counts it; only its ID stays in its group's queue, passed over when its turn comes.
final class ExclusivityController: Sendable {
    static let shared = ExclusivityController()

    private enum Grant {
        case resume(CheckedContinuation<Void, any Error>)
        case start(AsyncOperation)
    }

    private struct Waiter {
        let id: UInt64
        let limit: Int
        let grant: Grant

        /// Whether granting it would be in vain: a queued operation that has finished (cancelled).
        var isAbandoned: Bool {
            if case .start(let operation) = grant { return operation.isFinished }
            return false
        }
    }

    private struct Category {
        var held = 0
        /// The waiters, by ID: a cancelled one is taken out of here at once.
        var waiting: [UInt64: Waiter] = [:]
        /// Waiter IDs by group, each in arrival order. The ID of a waiter cancelled meanwhile stays until
        /// its turn comes and is passed over then (or dropped by `compact`); so does a group left without waiters.
        var groups: [String: Deque<UInt64>] = [:]
        /// Groups with waiters, in turn order.
        var turns = Deque<String>()
        /// IDs in `groups` whose waiter was cancelled.
        var departed = 0

        var hasWaiters: Bool { !waiting.isEmpty }

        mutating func append(_ waiter: Waiter, group: String) {
            waiting[waiter.id] = waiter
            if groups[group] == nil {
                groups[group] = Deque()
                turns.append(group)
            }
            groups[group]?.append(waiter.id)
        }

        /// The waiter whose turn it is (cancelled waiters' IDs and groups left without waiters are dropped
        /// on the way).
        mutating func next() -> Waiter? {
            while let group = turns.first {
                while let id = groups[group]?.first {
                    if let waiter = waiting[id] { return waiter }
                    _ = groups[group]?.popFirst()
                    departed -= 1
                }
                groups[group] = nil
                _ = turns.popFirst()
            }
            return nil
        }

        /// Removes the waiter `next()` returned; its group goes to the back of the turns if it has more.
        mutating func removeNext() {
            guard let group = turns.popFirst(), var queue = groups.removeValue(forKey: group) else { return }
            if let id = queue.popFirst() { waiting[id] = nil }
            guard !queue.isEmpty else { return }
            groups[group] = queue
            turns.append(group)
        }

        /// Removes a cancelled waiter; `nil` when it is not waiting (any more: granted, or removed before).
        mutating func remove(id: UInt64) -> Waiter? {
            guard let waiter = waiting.removeValue(forKey: id) else { return nil }
            departed += 1
            if waiting.isEmpty {
                groups = [:]
                turns = Deque()
                departed = 0
            } else if departed > max(64, waiting.count) {
                compact()
            }
            return waiter
        }

        /// Drops the IDs of cancelled waiters from the groups' queues: when they outnumber the waiters, so
        /// that a category's memory follows its waiters (O(1) amortised per cancel).
        private mutating func compact() {
            for (group, queue) in groups {
                var kept = Deque<UInt64>()
                for id in queue where waiting[id] != nil { kept.append(id) }
                groups[group] = kept
            }
            departed = 0
        }
    }

    private struct State {
        var categories: [String: Category] = [:]
        var nextID: UInt64 = 0
    }

    private let state = LockedValue(State())

    func holders(of category: String) -> Int { state.withLock { $0.categories[category]?.held ?? 0 } }

    func waiters(of category: String) -> Int {
        state.withLock { $0.categories[category]?.waiting.count ?? 0 }
    }

    func acquire(category: String, limit: Int, group: String = "") async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case granted, cancelled, waiting }
                let outcome = state.withLock { s -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    var entry = s.categories.removeValue(forKey: category) ?? Category()
                    defer { s.categories[category] = entry }
                    if !entry.hasWaiters && entry.held < limit {
                        entry.held += 1
                        return .granted
                    }
                    entry.append(Waiter(id: id, limit: limit, grant: .resume(continuation)), group: group)
                    return .waiting
                }
                switch outcome {
                case .granted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard var entry = s.categories.removeValue(forKey: category) else { return nil }
                defer { s.categories[category] = entry }
                guard case .resume(let continuation)? = entry.remove(id: id)?.grant else { return nil }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Takes a slot of `category` for `operation` now (`true`), or queues it (`false`): it is started when
    /// a release grants it one (see the type's notes); if it finishes before (cancelled), it leaves the
    /// queue then.
    func acquireOrQueue(_ operation: AsyncOperation, category: String, limit: Int, group: String) -> Bool {
        let queued = state.withLock { s -> UInt64? in
            s.nextID &+= 1
            var entry = s.categories.removeValue(forKey: category) ?? Category()
            defer { s.categories[category] = entry }
            if !entry.hasWaiters && entry.held < limit {
                entry.held += 1
                return nil
            }
            entry.append(Waiter(id: s.nextID, limit: limit, grant: .start(operation)), group: group)
            return s.nextID
        }
        guard let queued else { return true }
        // Runs at its finish however it comes; after a grant, the waiter is gone already and nothing happens.
        operation.addFinishAction { [self] in withdraw(queued, from: category) }
        return false
    }

    /// Takes the queued operation `id` out of `category`'s waiters (it finished while it waited): the
    /// controller no longer holds it, nor counts it.
    private func withdraw(_ id: UInt64, from category: String) {
        let withdrawn = state.withLock { s -> Waiter? in
            guard var entry = s.categories.removeValue(forKey: category) else { return nil }
            let waiter = entry.remove(id: id)
            if entry.held > 0 || entry.hasWaiters { s.categories[category] = entry }
            return waiter
        }
        _ = withdrawn  // let go here, outside the lock
    }

    func release(category: String) {
        let granted = state.withLock { s -> [Grant] in
            guard var entry = s.categories.removeValue(forKey: category) else { return [] }
            entry.held -= 1
            var granted: [Grant] = []
            while let first = entry.next(), entry.held < first.limit {
                entry.removeNext()
                if first.isAbandoned { continue }
                entry.held += 1
                granted.append(first.grant)
            }
            if entry.held > 0 || entry.hasWaiters { s.categories[category] = entry }
            return granted
        }
        for grant in granted {
            switch grant {
            case .resume(let continuation):
                continuation.resume()
            case .start(let operation):
                operation.addFinishAction { ExclusivityController.shared.release(category: category) }
                operation.startExternally()
            }
        }
    }
}
