/// When the coordinator looks for silent workers, so that a coordinator behind on its messages never
/// takes its own backlog for their silence.
///
/// The socket's thread receives messages as they come and queues them for the coordinator in groups
/// (`SocketChannel.messageBatches`). When the coordinator falls behind (a flood of results), a worker's
/// heartbeats wait in that queue: judged by the clock alone, a live worker would look silent. So the
/// liveness timer does not judge at once: it notes how many groups the socket had received when it
/// fired (at `T`), and the check for `T` runs once the coordinator has handled that many groups, that is
/// once every message received before `T` (every heartbeat sent in time) has been noted. Silence is then
/// measured up to `T`, not up to the (later) moment the check runs. A coordinator that keeps up checks at
/// once, as before.
///
/// Free of I/O: the coordinator reports each group handled and each timer tick, and runs the check
/// when told to.
struct LivenessCheckpoint {
    /// Groups of received messages the coordinator has handled.
    private(set) var handledBatches: UInt64 = 0
    /// A check waiting for the coordinator to catch up: the groups received by then, and when.
    private var pending: (receivedBatches: UInt64, at: ContinuousClock.Instant)?
    /// Checks that had to wait for the coordinator to catch up with its messages.
    private(set) var deferredChecks: UInt64 = 0

    /// Whether a check waits for the coordinator to handle what it has received.
    var isBehind: Bool { pending != nil }

    /// The liveness timer fired at `now`, when the socket had received `receivedBatches` groups. Returns
    /// the instant to check silence at, when the check can run now; `nil` when it waits (see
    /// `handledBatch()`). While an earlier check still waits, this tick adds none: the earlier one runs
    /// first, and the next tick after it takes a new mark.
    mutating func timerFired(receivedBatches: UInt64, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard pending == nil else { return nil }
        if handledBatches >= receivedBatches { return now }
        pending = (receivedBatches, now)
        deferredChecks += 1
        return nil
    }

    /// The coordinator handled one group of received messages. Returns the instant of a waiting check
    /// that can run now (every group received before its timer fired has been handled).
    mutating func handledBatch() -> ContinuousClock.Instant? {
        handledBatches += 1
        guard let waiting = pending, handledBatches >= waiting.receivedBatches else { return nil }
        pending = nil
        return waiting.at
    }
}
