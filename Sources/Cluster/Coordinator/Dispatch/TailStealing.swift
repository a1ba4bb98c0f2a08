import Messaging

/// The bookkeeping of work stealing at a batch's tail (`Dispatcher+Stealing`), free of I/O: which workers
/// take part, which tasks were asked back and not answered yet, and which answered that they had started.
struct TailStealing {
    /// A task asked back: of which worker, which attempt.
    struct Ask: Equatable {
        let worker: PeerIdentity
        let attempt: UInt32
    }

    /// Workers that announced `WorkerHello.giveBackThreads` (registered; a record gone is skipped and
    /// forgotten at the next look).
    var workers: Set<PeerIdentity> = []
    /// Tasks asked back whose answer has not come, by key.
    var asked: [TaskKey: Ask] = [:]
    /// Attempts whose worker answered that they had started: never asked again.
    var started: [TaskKey: UInt32] = [:]
    /// Chained tilt-shifts given back whose downloads have not been queued again yet (their operations
    /// re-run them, `Lineage`), by the tilt-shift's key, since when: each will take an idle compute thread,
    /// so it counts as an ask until its download is queued (or `rerunWait` has passed: its item ended).
    var rerunsDue: [TaskKey: Rerun] = [:]
    /// A chained tilt-shift given back: since when, and by which worker (its download's re-run passes it over).
    struct Rerun: Equatable {
        let since: ContinuousClock.Instant
        let victim: PeerIdentity
    }

    /// How long a re-run is waited for before it no longer counts.
    static let rerunWait: Duration = .seconds(5)
    /// `GiveBackTask` sent since the coordinator started.
    var askedCount: UInt64 = 0
    /// Tasks given back (by an answer, or found no longer held after an ask) and assigned again.
    var givenBackCount: UInt64 = 0

    /// Forgets re-runs waited for longer than `rerunWait`.
    mutating func expireReruns(now: ContinuousClock.Instant) {
        guard !rerunsDue.isEmpty else { return }
        rerunsDue = rerunsDue.filter { now - $0.value.since <= Self.rerunWait }
    }

    /// Whether `key` (attempt `attempt`, running on `worker`) may be asked back: not asked already, and
    /// its worker has not said it started.
    func mayAsk(_ key: TaskKey, attempt: UInt32) -> Bool {
        asked[key] == nil && started[key] != attempt
    }

    /// How many asks wait for an answer from `worker`.
    func pending(on worker: PeerIdentity) -> Int {
        asked.values.reduce(0) { $0 + ($1.worker == worker ? 1 : 0) }
    }

    /// Forgets asks and answers that no longer describe a running attempt (`isCurrent` says which do).
    mutating func prune(keeping isCurrent: (TaskKey, PeerIdentity?, UInt32) -> Bool) {
        if !asked.isEmpty { asked = asked.filter { isCurrent($0.key, $0.value.worker, $0.value.attempt) } }
        if !started.isEmpty { started = started.filter { isCurrent($0.key, nil, $0.value) } }
    }
}
