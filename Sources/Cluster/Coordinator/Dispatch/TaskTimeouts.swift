import Wire

/// Which attempts of tasks have run on their workers for longer than the task timeout, free of I/O: the
/// coordinator tells it what it sent (`sent`), asks it each tick which attempts ran too long (`expire`),
/// cancels those on their workers, and, once the dispatcher no longer holds one (its worker confirmed the
/// cancel, or died), fails its attempt as timed out (`settle`). Only the attempt that was timed out is
/// failed: a later attempt, or one whose result came first (also a success crossing the cancel), is not
/// touched.
struct TaskTimeouts {
    /// An attempt cancelled for running too long, waiting for its worker's confirmation.
    struct TimedOut: Equatable {
        let attempt: UInt32
        let worker: PeerIdentity
        let source: String
    }

    private struct Running {
        let attempt: UInt32
        let worker: PeerIdentity
        let until: ContinuousClock.Instant
    }

    /// How long an attempt may run.
    let limit: Duration
    /// Attempts sent to workers, by task key (the latest attempt of each).
    private var running: [TaskKey: Running] = [:]
    /// Attempts cancelled for running too long, whose cancel is not confirmed yet.
    private(set) var timingOut: [TaskKey: TimedOut] = [:]

    init(limit: Duration) {
        self.limit = limit
    }

    /// Attempts whose clock runs: sent and neither answered (`finished`) nor let go by a tick (`expire`).
    var watchedCount: Int { running.count }

    /// The limit in whole seconds, as messages say it.
    var limitSeconds: Int64 { max(1, limit.components.seconds) }

    /// Notes the assignments among `outbound`: their time starts now.
    mutating func sent(_ outbound: [Outbound], now: ContinuousClock.Instant) {
        for message in outbound {
            guard case .taskAssignment(let assignment) = message.message, assignment.taskKey != 0 else { continue }
            running[assignment.taskKey] = Running(attempt: assignment.attempt, worker: message.peer, until: now + limit)
        }
    }

    /// `assignment` runs on `worker` without having been sent (a chained follow-on): its time starts now.
    mutating func started(_ assignment: TaskAssignment, on worker: PeerIdentity, now: ContinuousClock.Instant) {
        running[assignment.taskKey] = Running(attempt: assignment.attempt, worker: worker, until: now + limit)
    }

    /// Task `key` has its result: its clock stops now, so that the tick's scan (`expire`) goes over the
    /// attempts still running, not over every one sent since the last tick; an attempt of it timing out
    /// (whose success crossed the cancel: `Dispatcher+LateResults`) is not failed.
    mutating func finished(_ key: TaskKey) {
        running[key] = nil
        if !timingOut.isEmpty { timingOut[key] = nil }
    }

    /// The keys of tasks whose current attempt has run on its worker for longer than the limit (to cancel
    /// there); they wait for `settle`. Attempts the dispatcher no longer runs (finished, requeued) are let go.
    mutating func expire(now: ContinuousClock.Instant, dispatcher: Dispatcher) -> [TaskKey] {
        var expired: [TaskKey] = []
        for (key, attempt) in running {
            guard let entry = dispatcher.entries[key], entry.assignment.attempt == attempt.attempt,
                entry.state == .running(worker: attempt.worker)
            else {
                running[key] = nil
                continue
            }
            guard now >= attempt.until else { continue }
            running[key] = nil
            timingOut[key] = TimedOut(attempt: attempt.attempt, worker: attempt.worker, source: entry.assignment.source)
            expired.append(key)
        }
        return expired
    }

    /// The timed-out attempts the dispatcher no longer holds (their cancel was confirmed, or their worker
    /// is gone): fail them now. A task whose key the dispatcher holds again with another attempt (a retry
    /// queued meanwhile) counts as settled too.
    mutating func settle(dispatcher: Dispatcher) -> [(key: TaskKey, timedOut: TimedOut)] {
        guard !timingOut.isEmpty else { return [] }
        var settled: [(key: TaskKey, timedOut: TimedOut)] = []
        for (key, timedOut) in timingOut {
            if let entry = dispatcher.entries[key], entry.assignment.attempt == timedOut.attempt { continue }
            timingOut[key] = nil
            settled.append((key, timedOut))
        }
        return settled
    }

    /// The failure of a timed-out attempt.
    func failure(_ timedOut: TimedOut, workerID: String) -> TaskFailure {
        TaskFailure(
            code: .timedOut,
            message: "\(timedOut.source): timed out after \(limitSeconds) s on worker \(workerID) (the coordinator's "
                + "--task-timeout); cancelled there",
            isTransient: true)
    }
}
