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
    /// `GiveBackTask` sent since the coordinator started.
    var askedCount: UInt64 = 0
    /// Tasks given back (by an answer, or found no longer held after an ask) and assigned again.
    var givenBackCount: UInt64 = 0

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
