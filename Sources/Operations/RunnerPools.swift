/// One ``RunnerPool`` per task priority, whose runners all prefer the same executor: Swift's cooperative
/// pool (``shared``, for every ``WorkQueue`` made without an executor), or a `TaskExecutor` of a queue's
/// own (`WorkQueue(name:maxConcurrentOperationCount:executor:)`), which the children of its groups use too.
final class RunnerPools: Sendable {
    /// The pools of every queue without an executor: their runners run on Swift's cooperative pool.
    static let shared = RunnerPools(executor: nil)

    /// The executor the runners prefer, or `nil` for the cooperative pool.
    let executor: (any TaskExecutor)?
    /// By ``OperationPriority/taskPriority``.
    private let pools: [RunnerPool]

    init(executor: (any TaskExecutor)?) {
        self.executor = executor
        pools = [TaskPriority.background, .low, .medium, .high].map { RunnerPool(priority: $0, executor: executor) }
    }

    /// Lets every pool's parked runners end (see ``RunnerPool/retire()``).
    func retire() {
        for pool in pools { pool.retire() }
    }

    /// The pool whose runners run operations of `priority`.
    func pool(for priority: OperationPriority) -> RunnerPool {
        switch priority {
        case .veryLow: return pools[0]
        case .low: return pools[1]
        case .normal: return pools[2]
        case .high, .veryHigh: return pools[3]
        }
    }
}
