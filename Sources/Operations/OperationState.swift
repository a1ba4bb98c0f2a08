/// The lifecycle state of an ``AsyncOperation``.
///
/// An operation moves forward only:
/// `pending → ready → executing → finished`, and it can end early as `cancelled` or `failed`
/// from any non-terminal state. `finished`, `cancelled` and `failed` are terminal: an operation
/// reaches exactly one of them, exactly once (the first cause wins).
public enum OperationState: Sendable, Hashable, CustomStringConvertible {
    /// Created, possibly enqueued, but some dependency has not finished yet (or it is not enqueued).
    case pending
    /// Every dependency has finished; the operation waits for a queue slot and its conditions.
    case ready
    /// The operation's ``AsyncOperation/execute()`` is running.
    case executing
    /// Terminal: `execute()` returned normally.
    case finished
    /// Terminal: the operation was cancelled (by ``AsyncOperation/cancel(error:)``, its group,
    /// its queue, or a dependency whose success it required).
    case cancelled
    /// Terminal: `execute()` threw, a condition failed, or the timeout elapsed. See ``AsyncOperation/errors``.
    case failed

    /// `true` for the three terminal states `finished`, `cancelled` and `failed`.
    public var isTerminal: Bool {
        switch self {
        case .finished, .cancelled, .failed: return true
        case .pending, .ready, .executing: return false
        }
    }

    /// A lowercase name, for logs.
    public var description: String {
        switch self {
        case .pending: return "pending"
        case .ready: return "ready"
        case .executing: return "executing"
        case .finished: return "finished"
        case .cancelled: return "cancelled"
        case .failed: return "failed"
        }
    }
}

/// The scheduling priority of an operation inside its ``WorkQueue``.
///
/// Among ready operations waiting for a slot, higher priorities start first; equal priorities start
/// in the order they became ready. The priority also sets the `TaskPriority` of the task that runs
/// the operation (except for an operation that another one made ready: it runs next on the task that
/// finished that one, whatever its priority, which spares a task switch in chains).
public enum OperationPriority: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Background work.
    case veryLow = 0
    /// Below normal.
    case low = 1
    /// The default.
    case normal = 2
    /// Above normal.
    case high = 3
    /// Starts before anything else that is ready.
    case veryHigh = 4

    /// Orders priorities from `veryLow` to `veryHigh`.
    public static func < (lhs: OperationPriority, rhs: OperationPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The Swift task priority used for the task that executes the operation.
    public var taskPriority: TaskPriority {
        switch self {
        case .veryLow: return .background
        case .low: return .low
        case .normal: return .medium
        case .high, .veryHigh: return .high
        }
    }
}

/// What an edge added by ``AsyncOperation/addDependency(_:policy:)`` requires of the dependency.
public enum DependencyPolicy: Sendable, Hashable {
    /// Run after the dependency has finished, whatever happened to it (finished, cancelled or failed).
    /// This is the default for plain dependencies, as with Foundation's `Operation`.
    case afterCompletion
    /// Run only if the dependency finished successfully. If it is cancelled or fails, the dependent is
    /// cancelled at once with a ``DependencyFailedError`` (or an ``InjectionError`` for injection
    /// edges) that carries the dependency's errors. The default for result injection.
    case requireSuccess
}
