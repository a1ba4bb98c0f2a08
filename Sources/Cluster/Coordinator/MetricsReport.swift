import Wire

/// The coordinator's counts and gauges as they stand, read from the dispatcher, the batch registry and
/// the coordinator's own counts; `CoordinatorMetrics` records them for the `/metrics` page.
struct MetricsReport: Equatable {
    /// One connected worker's figures (workers that share an ID are added up: one series per ID).
    struct WorkerFigures: Equatable {
        var slots = 0
        var runningTasks = 0
        var tasksCompleted: UInt64 = 0
        var tasksFailed: UInt64 = 0
    }

    var workers: [String: WorkerFigures] = [:]
    var tasksQueued = 0
    var tasksRunning = 0
    var tasksCompleted: UInt64 = 0
    var tasksFailed: UInt64 = 0
    var tasksPerSecond = 0.0
    var batchesAccepted: UInt64 = 0
    var batchesRunning = 0
    var localInputs: UInt64 = 0
    var localInputsMissed: UInt64 = 0
    /// Tilt-shifts that ran chained to their downloads, without an assignment of their own.
    var chainedTasks: UInt64 = 0
    /// Tasks completed by the success of an attempt already given up on (`Dispatcher+LateResults`).
    var lateResultsUsed: UInt64 = 0
    /// Tasks asked back for an idle compute thread, and of those given back (`Dispatcher+Stealing`).
    var tasksAskedBack: UInt64 = 0
    var tasksGivenBack: UInt64 = 0
    var assignmentsLost: UInt64 = 0
    /// Tasks queued to run again, by why.
    var resends = TaskResends()
    var inputsLost: UInt64 = 0
    var downloadBytesReceived: UInt64 = 0
    var outputBytesReceived: UInt64 = 0
    var messagesDropped: UInt64 = 0
    /// Peers refused by CurveZMQ; `nil` without it (the metric is then left out).
    var peersRefused: Int?
    /// Requests refused for want of a role or of ownership (`AccessControl`), by labels.
    var accessRefusals: [AccessRefusal.Labels: UInt64] = [:]
    /// Messages refused for a field out of bounds (`MessageBounds`), by field.
    var refusedMessages: [String: UInt64] = [:]
    /// Per client (its key, or its connection without CurveZMQ): items queued and batches kept (`ClientUsage`).
    var clients: [String: ClientUsage] = [:]
    /// A coordinator of a pair: its role, its peer's, the backup's lag (`nil` alone).
    var pair: WirePairStatus?
    /// A coordinator of a pair: its peer's announcements refused (another cluster, another major version,
    /// another pair version, unreadable), and journal stream messages refused (a bad checksum, a wrong
    /// count, a gap, an older snapshot); `nil` alone.
    var pairRefusedAnnouncements: UInt64?
    var pairRefusedStreamMessages: UInt64?

    /// The report of `coordinator` as it stands.
    init(coordinator: isolated Coordinator, now: ContinuousClock.Instant) {
        self.init(
            dispatcher: coordinator.dispatcher, registry: coordinator.registry,
            queuedTasks: coordinator.queuedTaskCount, droppedMessages: coordinator.droppedMessages,
            peersRefused: coordinator.authenticationRefusalsIfAuthenticating, now: now)
        accessRefusals = coordinator.access.refusals
        refusedMessages = coordinator.refusedMessages
        pair = coordinator.pairStatus(now: now)
        pairRefusedAnnouncements = coordinator.pairing?.refusedAnnouncements
        pairRefusedStreamMessages = coordinator.pairing?.receiver.refusedMessages
    }

    init(
        dispatcher: Dispatcher, registry: BatchRegistry, queuedTasks: Int, droppedMessages: UInt64,
        peersRefused: Int?, now: ContinuousClock.Instant
    ) {
        for worker in dispatcher.workers.values {
            workers[worker.workerID, default: WorkerFigures()].add(worker)
        }
        tasksQueued = queuedTasks
        tasksRunning = dispatcher.runningTaskCount
        tasksCompleted = dispatcher.completedTasks
        tasksFailed = dispatcher.failedTasks
        tasksPerSecond = dispatcher.tasksPerSecond(now: now)
        batchesAccepted = registry.batchesAccepted
        batchesRunning = registry.runningBatchCount
        localInputs = dispatcher.localInputs
        localInputsMissed = dispatcher.localInputsMissed
        chainedTasks = dispatcher.chained.chainedCount
        lateResultsUsed = dispatcher.lateResultsUsed
        tasksAskedBack = dispatcher.stealing.askedCount
        tasksGivenBack = dispatcher.stealing.givenBackCount
        assignmentsLost = dispatcher.lostDeliveries
        resends = dispatcher.resends
        inputsLost = dispatcher.inputsLost
        downloadBytesReceived = dispatcher.downloadBytesReceived
        outputBytesReceived = dispatcher.outputBytesReceived
        messagesDropped = droppedMessages + dispatcher.staleResults
        self.peersRefused = peersRefused
        for (client, usage) in registry.clientUsage { clients[client.description] = usage }
    }

    /// An empty report (no workers, every count 0).
    init() {}
}

extension MetricsReport.WorkerFigures {
    fileprivate mutating func add(_ worker: WorkerRecord) {
        slots += worker.slots
        runningTasks += worker.running.count
        tasksCompleted += worker.completed
        tasksFailed += worker.failed
    }
}
