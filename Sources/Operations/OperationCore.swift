/// All mutable state of one ``AsyncOperation``, guarded by its lock (`AsyncOperation.core`).
struct OperationCore {
    var state: OperationState = .pending
    var name: String?
    var priority: OperationPriority
    var errors: [any Error] = []
    var attempt = 0
    var timeout: Duration?
    var retryPolicy: RetryPolicy?

    var edges: [DependencyEdge] = []
    var hasInjections = false
    var unsatisfied = 0
    var dependents: [DependentLink] = []

    var queue: WorkQueue?
    var queueSlot = -1
    var parent: GroupOperation?
    var launched = false
    var holdsSlot = false
    var runner: OperationRunner?
    var stop: StopReason?

    var observers: [any OperationObserver] = []
    var conditions: [any OperationCondition] = []
    var completions: [@Sendable (AsyncOperation) -> Void] = []
    var finishActions: [@Sendable () -> Void] = []
    var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
    var nextWaiterID: UInt64 = 0

    init(name: String?, priority: OperationPriority) {
        self.name = name
        self.priority = priority
    }
}
