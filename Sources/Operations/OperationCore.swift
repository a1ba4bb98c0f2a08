/// All mutable state of one ``AsyncOperation``, guarded by its lock (`AsyncOperation.core`).
///
/// Kept small on purpose: it is created, copied into its lock and destroyed once per operation, and most
/// of it is moved out in one step when the operation finishes. What few operations use (a timeout, a retry
/// policy, conditions, completion handlers, finish actions, waiters) lives in ``extras``, `nil` otherwise.
struct OperationCore {
    var state: OperationState = .pending
    var priority: OperationPriority
    var launched = false
    /// The operation holds one of its queue's slots (from launch until it finishes or gives it back).
    var holdsSlot = false
    var hasInjections = false
    var attempt = 0
    var unsatisfied = 0
    var queueSlot = -1
    var name: String?
    var errors: [any Error] = []

    var edges = InlineList<DependencyEdge>()
    var dependents = InlineList<DependentLink>()

    var queue: WorkQueue?
    var parent: GroupOperation?
    var runner: OperationRunner?
    var stop: StopReason?

    var observers: [any OperationObserver] = []
    var extras: OperationExtras?

    init(name: String?, priority: OperationPriority) {
        self.name = name
        self.priority = priority
    }

    var timeout: Duration? {
        get { extras?.timeout }
        set { updateExtras { $0.timeout = newValue } }
    }

    var retryPolicy: RetryPolicy? {
        get { extras?.retryPolicy }
        set { updateExtras { $0.retryPolicy = newValue } }
    }

    var conditions: [any OperationCondition] { extras?.conditions ?? [] }

    /// Changes ``extras``, creating them if needed.
    mutating func updateExtras<Result>(_ body: (OperationExtras) -> Result) -> Result {
        if let extras { return body(extras) }
        let created = OperationExtras()
        extras = created
        return body(created)
    }

    /// Moves the edges out (freeing an operation releases its dependencies one by one, see `deinit`).
    mutating func takeEdges() -> InlineList<DependencyEdge> {
        var taken = InlineList<DependencyEdge>()
        swap(&taken, &edges)
        return taken
    }
}

/// The parts of an operation's state that most operations never use (a class, so that an operation
/// without them stores one `nil` reference; like the rest of ``OperationCore``, it is only reached under the
/// operation's lock).
final class OperationExtras {
    var conditions: [any OperationCondition] = []
    var timeout: Duration?
    var retryPolicy: RetryPolicy?
    /// Run when the operation finishes; moved out then.
    var hooks = FinishHooks()
    var nextWaiterID: UInt64 = 0
}

/// What runs when an operation finishes, besides its observers.
struct FinishHooks {
    /// Before the observers (release of mutual-exclusion slots).
    var finishActions: [@Sendable () -> Void] = []
    /// After the observers, before the dependents.
    var completions: [@Sendable (AsyncOperation) -> Void] = []
    /// Last: the tasks in `waitUntilFinished()`.
    var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
}
