import Wire

/// The coordinator's number for a task (`TaskAssignment.taskKey`): the dispatcher's maps are keyed by
/// it, not by the task ID string, and workers are told which task to cancel by it. Handed out by the
/// `BatchRegistry`: unique for one coordinator, never 0.
typealias TaskKey = UInt64

/// The coordinator's dispatch state and rules, free of I/O: which worker holds which task, which tasks
/// wait for a slot, and who is alive. Each event goes in; the messages to send come out.
///
/// Rules:
/// - Credit-based flow control: a worker holds at most `slots` tasks. A slot is freed only by the
///   worker's answer for the task that held it (a result, or its confirmation of a cancel).
/// - A worker silent for longer than `workerTimeout` is dead. Its tasks' attempts are lost
///   (`WorkerLoss`, taken with `takeWorkerLosses()`): the coordinator fails them as `workerLost`, and
///   their operations retry them (new attempts) as the batch's `--retries` allow. So with a worker that
///   leaves while running a task, or an assignment that never reached its worker. A late result of the
///   old attempt is stale, unless it is a success that comes while the task has no result yet
///   (`Dispatcher+LateResults`: first valid result wins). A task a leaving worker never reported
///   receiving is queued again, first in line, without counting an attempt.
/// - A ready task goes to the worker with the most free slots (the least loaded; ties in turn), found in
///   the `FreeSlotIndex` in O(1): a result's freed slot is filled without scanning the workers.
/// - Which ready task goes next is the `FairShareQueue`'s: clients and batches take turns, weighted by
///   their batches' priorities; within a batch, urgent tasks first, then in the order they became ready.
struct Dispatcher {
    /// Heartbeats after which an assignment its worker still has not reported receiving counts as lost
    /// (the worker heard nothing newer since: the last assignment it was sent did not arrive whole).
    static let heartbeatsBeforeLost = 5

    let heartbeatInterval: Duration
    let workerTimeout: Duration
    /// The registered workers. A record's `running` and `draining` change only through `occupy`, `vacate`
    /// and `setDraining` (`Dispatcher+Slots`), which keep `freeSlotIndex` true; records come and go through
    /// `addWorker` and `dropWorker`.
    var workers: [PeerIdentity: WorkerRecord] = [:]
    /// The workers with free slots, by how many: where the next task goes, without scanning `workers`.
    var freeSlotIndex = FreeSlotIndex()
    /// The `TaskAssignment.sequence` of the last assignment sent to any worker. Sequences increase over
    /// all workers and registrations, so that a worker registered again is never sent a sequence that a
    /// heartbeat of its previous registration (still on its way) could cover (`WorkerRecord.sequenceFloor`).
    var lastSequence: UInt64 = 0
    var entries: [TaskKey: Entry] = [:]
    var readyQueue: FairShareQueue
    /// Keys by task ID, only for the tasks that need it: enqueued without a key (one is made up here), or
    /// sent to a worker of minor 0, whose results carry no key.
    var keysByID: [String: TaskKey] = [:]
    /// Keys made up for tasks enqueued without one: far above the keys the registry hands out.
    var nextLocalKey: TaskKey = 1 << 63

    var completedTasks: UInt64 = 0
    var failedTasks: UInt64 = 0
    /// Results of attempts that are no longer current (the task was requeued, cancelled or finished).
    var staleResults: UInt64 = 0
    /// Tasks completed by the success of an attempt already timed out, or let go with a worker declared
    /// dead, that came before any other result (`Dispatcher+LateResults`).
    var lateResultsUsed: UInt64 = 0
    /// Attempts let go unanswered whose worker may still send their result (`Dispatcher+LateResults`).
    var lateAttempts = LateAttempts()
    /// Assignments found lost on the way to a worker (their attempts failed as `workerLost`).
    var lostDeliveries: UInt64 = 0
    /// Heartbeats sent before their worker heard its latest `Welcome`, taken as signs of life only.
    var crossedHeartbeats: UInt64 = 0
    /// Slots kept for dependents, by the dependent's key.
    var reservations: [TaskKey: Reservation] = [:]
    /// Tasks sent to the worker that holds their input, which therefore did not travel (locality).
    var localInputs: UInt64 = 0
    /// Of those, tasks whose input the worker no longer had, sent again with the bytes.
    var localInputsMissed: UInt64 = 0
    /// Which worker holds the input of which dependent (downloads that stayed where they landed).
    var placements = InputPlacements()
    /// Workers with tasks pinned to them (`WorkerRecord.pinned`) waiting for a slot.
    var workersWithPinned: Set<PeerIdentity> = []
    /// Failures (`inputMissing`) of tasks whose input is gone with its worker, for the coordinator to
    /// deliver (`takeLostInputs()`); their producers are run again (`Lineage`).
    var lostInputs: [TaskResult] = []
    /// Task attempts lost with their workers, for the coordinator to fail (`takeWorkerLosses()`).
    var workerLosses: [WorkerLoss] = []
    /// Tasks whose input was lost that way.
    var inputsLost: UInt64 = 0
    /// Tasks queued to run again, by why (the coordinator adds its operations' retries).
    var resends = TaskResends()
    /// Bytes of task outputs that reached the coordinator, downloads and the rest apart: with downloads
    /// kept on workers and a sink, both stay near 0 (a manifest's list and no-op results only).
    var downloadBytesReceived: UInt64 = 0
    var outputBytesReceived: UInt64 = 0
    /// A reservation not taken up within this long is given back (its dependent never came).
    static let reservationTimeout: Duration = .seconds(30)
    /// Finished tasks per second, for the throughput in status.
    var throughput = ThroughputMeter()
    /// Tilt-shifts chained to their downloads (`Dispatcher+Chained`).
    var chained = ChainedFollowOns()
    /// Work stealing at a batch's tail (`Dispatcher+Stealing`).
    var stealing = TailStealing()

    /// Sent in `Welcome`, so that a worker's log says which coordinator (instance) it joined.
    let coordinatorID: String

    /// Sent in `Welcome`: the largest message the coordinator accepts (0: not said).
    let maxMessageBytes: UInt64

    init(
        heartbeatInterval: Duration, workerTimeout: Duration, coordinatorID: String = "",
        maxMessageBytes: UInt64 = 0, scheduling: SchedulingPolicy = .fairShare
    ) {
        self.readyQueue = FairShareQueue(policy: scheduling)
        self.coordinatorID = coordinatorID
        self.maxMessageBytes = maxMessageBytes
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
    }

    var queuedTaskCount: Int { readyQueue.count }
    var runningTaskCount: Int { workers.values.reduce(0) { $0 + $1.running.count } }
}
