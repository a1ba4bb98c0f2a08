
/// A condition that lets at most `limit` operations of the same `category` execute at once, process-wide
/// (the seeds' `MutuallyExclusive`; with `limit > 1`, for example "at most 4 downloads per host").
///
/// The slot is taken when the operation starts (after its dependencies, never at enqueue) and released
/// when it finishes, however it finishes. Waiting suspends the operation's task without blocking a thread;
/// waiters are served first-come first-served, and a waiting operation can be cancelled. An operation with
/// several exclusions acquires them in category order, so two operations cannot deadlock on each other's
/// categories. While it waits it holds its ``WorkQueue`` slot.
public struct MutualExclusion: OperationCondition {
    /// The category; operations with equal categories exclude each other.
    public let category: String
    /// How many operations of the category may execute at once (at least 1).
    public let limit: Int

    /// A name for diagnostics, e.g. `MutualExclusion(download:example.com, limit: 4)`.
    public var name: String { "MutualExclusion(\(category), limit: \(limit))" }

    /// Creates an exclusion on `category`.
    public init(category: String, limit: Int = 1) {
        self.category = category
        self.limit = max(1, limit)
    }

    /// Creates an exclusion whose category is a type's name, e.g. `MutualExclusion(LoginOperation.self)`.
    public init<T>(_ type: T.Type, limit: Int = 1) {
        self.init(category: String(reflecting: type), limit: limit)
    }

    /// Waits for a slot of the category, then registers its release for when `operation` finishes.
    public func evaluate(for operation: AsyncOperation) async throws {
        let category = self.category
        try await ExclusivityController.shared.acquire(category: category, limit: limit)
        operation.addFinishAction { ExclusivityController.shared.release(category: category) }
    }

    /// The number of operations currently holding a slot of `category` (for diagnostics and tests).
    public static func holders(of category: String) -> Int {
        ExclusivityController.shared.holders(of: category)
    }
}

/// The process-wide counters and FIFO waiters of the mutual-exclusion categories.
final class ExclusivityController: Sendable {
    static let shared = ExclusivityController()

    private struct Waiter {
        let id: UInt64
        let limit: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Category {
        var held = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var categories: [String: Category] = [:]
        var nextID: UInt64 = 0
    }

    private let state = LockedValue(State())

    func holders(of category: String) -> Int { state.withLock { $0.categories[category]?.held ?? 0 } }

    func acquire(category: String, limit: Int) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case granted, cancelled, waiting }
                let outcome = state.withLock { s -> Outcome in
                    var entry = s.categories[category] ?? Category()
                    defer { s.categories[category] = entry }
                    if Task.isCancelled { return .cancelled }
                    if entry.waiters.isEmpty && entry.held < limit {
                        entry.held += 1
                        return .granted
                    }
                    entry.waiters.append(Waiter(id: id, limit: limit, continuation: continuation))
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
                guard var entry = s.categories[category],
                    let index = entry.waiters.firstIndex(where: { $0.id == id })
                else { return nil }
                let waiter = entry.waiters.remove(at: index)
                s.categories[category] = entry
                return waiter.continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    func release(category: String) {
        let granted = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            guard var entry = s.categories[category] else { return [] }
            entry.held -= 1
            var granted: [CheckedContinuation<Void, any Error>] = []
            while let first = entry.waiters.first, entry.held < first.limit {
                entry.waiters.removeFirst()
                entry.held += 1
                granted.append(first.continuation)
            }
            if entry.held == 0 && entry.waiters.isEmpty {
                s.categories[category] = nil
            } else {
                s.categories[category] = entry
            }
            return granted
        }
        for continuation in granted { continuation.resume() }
    }
}
