import Messaging

/// What the coordinator knows of one connected worker.
struct WorkerRecord {
    let peer: PeerIdentity
    let workerID: String
    /// The CurveZMQ key it registered with (`nil` without CurveZMQ): only messages with this key speak
    /// for this registration (`WorkerBinding`).
    var key: CurvePublicKey? = nil
    let hostname: String
    let version: String
    /// The worker's credit: it is sent at most this many tasks at once.
    let slots: Int
    /// Tasks sent to it whose result (or cancel confirmation) has not come back. A slot is free only
    /// once the worker has answered for the task that held it.
    var running: Set<TaskKey> = []
    var completed: UInt64 = 0
    var failed: UInt64 = 0
    /// Messages the worker dropped, as its last heartbeat said.
    var droppedMessages: UInt64 = 0
    /// The dispatcher's last sequence when the worker registered: every assignment of this registration
    /// has a higher one. The worker counts its `Heartbeat.lastSequence` from 0 again on `Welcome`, so a
    /// heartbeat reporting one in `1...sequenceFloor` was sent before the worker heard this registration's
    /// `Welcome` (it crossed it): it says nothing about this registration's assignments.
    var sequenceFloor: UInt64 = 0
    /// The highest sequence its heartbeats said it received (`Heartbeat.last_sequence`), or that a result
    /// showed: the assignments up to it reached the worker, which started them.
    var acknowledgedSequence: UInt64 = 0
    var lastSeen: ContinuousClock.Instant
    /// When the coordinator handled its last heartbeat (`nil`: none yet): heartbeats of a backlog come
    /// handled in a burst, and only one of a burst counts towards an assignment's `heartbeatsUnseen`.
    var lastHeartbeat: ContinuousClock.Instant?
    /// The worker is stopping gracefully: it finishes what it holds and is sent nothing new.
    var draining = false
    /// The worker speaks minor 1 (`WorkerHello.acceptsBatches`): it understands batch messages and
    /// echoes task keys in its results.
    var acceptsBatches = false
    /// The worker runs a download's follow-on after it (`WorkerHello.acceptsChainedTasks`).
    var acceptsChainedTasks = false
    /// Its compute threads, when it gives tasks back (`WorkerHello.giveBackThreads`); 0: never asked.
    var giveBackThreads = 0
    /// Tasks that may run only here (their input stayed on this worker), waiting for one of its slots;
    /// sent before the shared queue's tasks.
    var pinned: [TaskKey] = []

    var freeSlots: Int { draining ? 0 : max(0, slots - running.count) }
}
