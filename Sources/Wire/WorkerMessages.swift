// Messages between a worker and the coordinator about the worker itself (not its tasks).

/// Sent by a worker to the coordinator right after it connects: who it is and how many tasks it can
/// run at once (its credit). The coordinator answers with ``Welcome`` or a ``Refusal``.
public struct WorkerHello: Sendable, Equatable {
    /// Stable for the life of the worker process.
    public var workerID: String
    /// How many tasks the worker runs at once: its credit.
    public var slots: UInt32
    /// The worker's software version, for status.
    public var version: String
    /// The worker's host name, for status.
    public var hostname: String
    /// The worker understands ``Message/taskAssignments(_:)`` (minor 1).
    public var acceptsBatches: Bool
    /// The worker runs a download's ``TaskAssignment/followOn`` after it, in the same slot (chained tasks).
    public var acceptsChainedTasks: Bool = false
    /// The worker answers ``GiveBackTask`` and runs this many tasks' CPU-bound work at once (its compute
    /// threads; tasks beyond them wait): 0, an older worker, is never asked to give a task back.
    public var giveBackThreads: UInt32 = 0

    /// Creates a hello.
    public init(workerID: String, slots: UInt32, version: String = "", hostname: String = "", acceptsBatches: Bool = false,
                acceptsChainedTasks: Bool = false, giveBackThreads: UInt32 = 0) {
        self.acceptsChainedTasks = acceptsChainedTasks
        self.giveBackThreads = giveBackThreads
        self.workerID = workerID
        self.slots = slots
        self.version = version
        self.hostname = hostname
        self.acceptsBatches = acceptsBatches
    }
}

/// Sent by the coordinator to a worker in answer to its ``WorkerHello``: the worker is registered and
/// must send a ``Heartbeat`` at the given interval.
public struct Welcome: Sendable, Equatable {
    /// How often the worker must send a ``Heartbeat``, in milliseconds.
    public var heartbeatIntervalMs: UInt32
    /// The coordinator's identity, for logs and status.
    public var coordinatorID: String
    /// The largest message the coordinator accepts, in bytes (0: not said). A worker whose result would
    /// be larger fails the task instead of being disconnected.
    public var maxMessageBytes: UInt64
    /// The coordinator understands ``Message/taskResults(_:)`` (minor 1).
    public var acceptsBatches: Bool

    /// Creates a welcome.
    public init(heartbeatIntervalMs: UInt32, coordinatorID: String = "", acceptsBatches: Bool = false,
                maxMessageBytes: UInt64 = 0) {
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.coordinatorID = coordinatorID
        self.acceptsBatches = acceptsBatches
        self.maxMessageBytes = maxMessageBytes
    }
}

/// Sent periodically by a worker to the coordinator to show that it is alive; a worker that misses
/// heartbeats is declared dead and its tasks are queued again.
public struct Heartbeat: Sendable, Equatable {
    /// The worker's identity, as in its ``WorkerHello``.
    public var workerID: String
    /// How many tasks the worker is running now.
    public var running: UInt32
    /// Messages from the coordinator the worker dropped (malformed, or of a kind meant for others),
    /// since it started: shown per worker in status.
    public var droppedMessages: UInt64
    /// The highest ``TaskAssignment/sequence`` received since the worker registered (minor 1; 0: none).
    public var lastSequence: UInt64
    /// The keys of the tasks the worker holds (received, result not sent yet).
    public var holding: [UInt64]

    /// Creates a heartbeat.
    public init(workerID: String, running: UInt32 = 0, droppedMessages: UInt64 = 0, lastSequence: UInt64 = 0,
                holding: [UInt64] = []) {
        self.workerID = workerID
        self.running = running
        self.droppedMessages = droppedMessages
        self.lastSequence = lastSequence
        self.holding = holding
    }
}

/// Sent by a worker to the coordinator when it shuts down in an orderly way, so that its tasks are
/// queued again at once rather than after missed heartbeats.
public struct WorkerGoodbye: Sendable, Equatable {
    /// The worker's identity, as in its ``WorkerHello``.
    public var workerID: String
    /// `true`: the worker takes no new tasks and finishes those it holds (a graceful stop, e.g. on
    /// SIGTERM); a final goodbye with `false` follows. `false`: the worker is gone now.
    public var draining: Bool

    /// Creates a goodbye.
    public init(workerID: String, draining: Bool = false) {
        self.workerID = workerID
        self.draining = draining
    }
}
