// The coordinator's answer to a StatusRequest and its parts.

/// The state of one worker, in a ``StatusReply``.
public struct WorkerStatus: Sendable, Equatable {
    /// The worker's identity.
    public var workerID: String
    /// The worker's host name.
    public var hostname: String
    /// How many tasks it can run at once.
    public var slots: UInt32
    /// How many tasks it is running now.
    public var running: UInt32
    /// How many tasks it has completed successfully.
    public var completed: UInt64
    /// How many tasks it has failed.
    public var failed: UInt64
    /// How long ago the coordinator last heard from it, in milliseconds.
    public var lastSeenMsAgo: UInt64
    /// Messages the worker dropped, as its last heartbeat said.
    public var droppedMessages: UInt64
    /// The worker's software version.
    public var version: String

    /// Creates a worker status.
    public init(
        workerID: String,
        hostname: String = "",
        slots: UInt32,
        running: UInt32 = 0,
        completed: UInt64 = 0,
        failed: UInt64 = 0,
        lastSeenMsAgo: UInt64 = 0,
        droppedMessages: UInt64 = 0,
        version: String = ""
    ) {
        self.workerID = workerID
        self.hostname = hostname
        self.slots = slots
        self.running = running
        self.completed = completed
        self.failed = failed
        self.lastSeenMsAgo = lastSeenMsAgo
        self.droppedMessages = droppedMessages
        self.version = version
    }
}

/// The state of one item of a batch, in a ``BatchStatus``.
public struct ItemStatus: Sendable, Hashable {
    /// The item's index in its batch.
    public var itemIndex: UInt32
    /// The item's source URL or path.
    public var source: String
    /// One of `queued`, `running`, `succeeded`, `failed`, `cancelled`.
    public var state: String
    /// Why it failed; empty otherwise.
    public var error: String
    /// A succeeded item's warnings (its output's ``TaskOutput/warnings``).
    public var warnings: [String]
    /// Where a succeeded item's output was written, when the batch has a sink (minor 3); else empty.
    public var location: String
    /// Attempts made at the item: 1 + the retries of its tasks (0: none started yet, or not said).
    public var attempts: UInt32
    /// Every failed attempt at one of its tasks, oldest first.
    public var failedAttempts: [AttemptStatus]

    /// Creates an item status.
    public init(itemIndex: UInt32, source: String = "", state: String, error: String = "", warnings: [String] = [],
                location: String = "", attempts: UInt32 = 0, failedAttempts: [AttemptStatus] = []) {
        self.itemIndex = itemIndex
        self.source = source
        self.state = state
        self.error = error
        self.warnings = warnings
        self.location = location
        self.attempts = attempts
        self.failedAttempts = failedAttempts
    }
}

/// One failed attempt at one of an item's tasks, in ``ItemStatus``.
public struct AttemptStatus: Sendable, Hashable {
    /// Which task: `download`, `tilt-shift` or `noop`.
    public var task: String
    /// The attempt's number for this task: 1, 2, 3…
    public var attempt: UInt32
    /// Why it failed.
    public var code: FailureCode
    /// The failure's message.
    public var error: String
    /// A cause that another attempt may cure.
    public var isTransient: Bool
    /// Another attempt followed.
    public var retried: Bool
    /// The wait before that attempt, in milliseconds (the backoff, or the origin's `Retry-After`).
    public var retryDelayMs: UInt32
    /// The worker it ran on (empty when unknown).
    public var worker: String
    /// When it failed, in milliseconds since 1970 (0: not said, e.g. by a coordinator before this field).
    public var failedUnixMilliseconds: UInt64

    /// Creates an attempt's status.
    public init(task: String, attempt: UInt32, code: FailureCode, error: String = "", isTransient: Bool = false,
                retried: Bool = false, retryDelayMs: UInt32 = 0, worker: String = "", failedUnixMilliseconds: UInt64 = 0) {
        self.task = task
        self.attempt = attempt
        self.code = code
        self.error = error
        self.isTransient = isTransient
        self.retried = retried
        self.retryDelayMs = retryDelayMs
        self.worker = worker
        self.failedUnixMilliseconds = failedUnixMilliseconds
    }
}

/// The state of one batch, in a ``StatusReply``.
public struct BatchStatus: Sendable, Equatable {
    /// The batch.
    public var batchID: String
    /// How many items it has.
    public var itemCount: UInt32
    /// How many items succeeded so far.
    public var succeeded: UInt32
    /// How many items failed so far.
    public var failed: UInt32
    /// How many items were cancelled so far.
    public var cancelled: UInt32
    /// Per-item states (sent when one batch was asked for).
    public var items: [ItemStatus]
    /// Its priority (``SubmitBatch/priority``).
    public var priority: Int32 = BatchPriority.normal
    /// The idempotency key it was submitted with; empty: none.
    public var idempotencyKey = ""

    /// Creates a batch status.
    public init(
        batchID: String,
        itemCount: UInt32,
        succeeded: UInt32 = 0,
        failed: UInt32 = 0,
        cancelled: UInt32 = 0,
        items: [ItemStatus] = []
    ) {
        self.batchID = batchID
        self.itemCount = itemCount
        self.succeeded = succeeded
        self.failed = failed
        self.cancelled = cancelled
        self.items = items
    }
}

/// Sent by the coordinator to a client in answer to ``StatusRequest``: the cluster (workers, load,
/// throughput counters) and the batches asked for.
public struct StatusReply: Sendable, Equatable {
    /// The client's correlation id, from ``StatusRequest``.
    public var requestID: String
    /// Every connected worker.
    public var workers: [WorkerStatus]
    /// Tasks waiting for a free slot.
    public var queuedTasks: UInt32
    /// Tasks running on workers.
    public var runningTasks: UInt32
    /// Tasks completed successfully since the coordinator started.
    public var completedTasks: UInt64
    /// Tasks failed since the coordinator started.
    public var failedTasks: UInt64
    /// The batch asked for, or every known batch.
    public var batches: [BatchStatus]
    /// Messages the coordinator dropped (malformed, oversized, from unknown peers).
    public var droppedMessages: UInt64
    /// Tasks finished (succeeded or failed) per second over the last 10 seconds.
    public var tasksPerSecond: Double
    /// The coordinator instance that answered (it changes when the coordinator restarts).
    public var coordinatorID: String
    /// What each client holds against the per-client limits: every client for an administrator (and
    /// without CurveZMQ), the asking client's own for a client.
    public var clients: [ClientStatus] = []
    /// The per-client limits (`--max-queued-items-per-client`, `--max-batches-per-client`); 0: not said.
    public var maxQueuedItemsPerClient: UInt32 = 0
    public var maxBatchesPerClient: UInt32 = 0

    /// Creates a status reply.
    public init(
        requestID: String,
        workers: [WorkerStatus] = [],
        queuedTasks: UInt32 = 0,
        runningTasks: UInt32 = 0,
        completedTasks: UInt64 = 0,
        failedTasks: UInt64 = 0,
        batches: [BatchStatus] = [],
        droppedMessages: UInt64 = 0,
        tasksPerSecond: Double = 0,
        coordinatorID: String = ""
    ) {
        self.requestID = requestID
        self.workers = workers
        self.queuedTasks = queuedTasks
        self.runningTasks = runningTasks
        self.completedTasks = completedTasks
        self.failedTasks = failedTasks
        self.batches = batches
        self.droppedMessages = droppedMessages
        self.tasksPerSecond = tasksPerSecond
        self.coordinatorID = coordinatorID
    }
}

/// One client's usage of the coordinator, in ``StatusReply/clients``.
public struct ClientStatus: Sendable, Equatable {
    /// Who: `key Z85` (its CurveZMQ public key) or `peer IDENTITY` (its connection, without CurveZMQ).
    public var client: String
    /// Its unfinished items (queued or running).
    public var queuedItems: UInt32
    /// Its batches the coordinator keeps: running, or finished and kept for status.
    public var batches: UInt32

    /// Creates a client's status.
    public init(client: String, queuedItems: UInt32, batches: UInt32) {
        self.client = client
        self.queuedItems = queuedItems
        self.batches = batches
    }
}
