/// When the coordinator looks for silent workers and for task attempts past the task timeout, so that a
/// coordinator behind on its messages never takes its own backlog for their silence (a live worker
/// declared dead, an answered task cancelled and sent again).
///
/// The coordinator's thread reads its socket between jobs, at most a group of messages at a time. When it
/// falls behind (a flood of results, a long job), a worker's heartbeats wait unread in the socket's
/// queue: judged by the clock alone, a live worker would look silent. So the liveness timer does not
/// judge at once when messages wait unread: it notes the instant `T` it fired, and the check for `T` runs
/// once the coordinator has handled a group of messages after which none waits unread, that is once
/// every message received before `T` (every heartbeat and result sent in time) has been noted. Silence is
/// then measured up to `T`, not up to the (later) moment the check runs. A coordinator that keeps up checks
/// at once.
///
/// Free of I/O: the coordinator reports each group handled and each timer tick, with whether messages
/// still wait unread, and runs the check when told to.
struct LivenessCheckpoint {
    /// A check waiting for the coordinator to catch up: when its timer fired.
    private var pending: ContinuousClock.Instant?
    /// Checks that had to wait for the coordinator to catch up with its messages.
    private(set) var deferredChecks: UInt64 = 0

    /// Whether a check waits for the coordinator to handle what it has received.
    var isBehind: Bool { pending != nil }

    /// The liveness timer fired at `now`; `caughtUp`: no message waits unread. Returns the instant to
    /// check silence at, when the check can run now; `nil` when it waits (see `handledMessages`). While an
    /// earlier check still waits, this tick adds none: the earlier one runs first, and the next tick
    /// after it takes a new mark.
    mutating func timerFired(caughtUp: Bool, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard pending == nil else { return nil }
        if caughtUp { return now }
        pending = now
        deferredChecks += 1
        return nil
    }

    /// The coordinator handled a group of received messages; `caughtUp`: none waits unread after it.
    /// Returns the instant of a waiting check that can run now (every message received before its timer
    /// fired has been handled).
    mutating func handledMessages(caughtUp: Bool) -> ContinuousClock.Instant? {
        guard caughtUp, let waiting = pending else { return nil }
        pending = nil
        return waiting
    }
}
