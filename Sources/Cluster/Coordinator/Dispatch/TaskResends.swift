import Wire

/// Tasks queued to run again after an attempt that gave no usable result, counted by why: a task sent to
/// a worker twice is never silent (`shiftwork_tasks_resent_total{reason}`). The dispatcher counts the
/// re-sends it decides itself (a task handed back, an input sent again with its bytes); the coordinator
/// counts those of the remote operations (retries and lineage re-runs) as it queues them.
struct TaskResends: Equatable {
    /// Why a task runs again.
    enum Reason: String, CaseIterable, Sendable {
        /// Its worker's heartbeats showed the assignment never arrived whole (`Dispatcher.lostDeliveries`).
        case assignmentLost = "assignment_lost"
        /// Its worker died, left or could no longer be reached while it held the task.
        case workerLost = "worker_lost"
        /// It ran past the coordinator's task timeout and was cancelled on its worker.
        case timedOut = "timed_out"
        /// Its worker reported a failure that is worth another attempt (a transient one).
        case failed
        /// The input it was to find on a worker was gone: sent again with the bytes, or its download re-run
        /// (`Lineage`).
        case inputMissing = "input_missing"
        /// A leaving worker handed it back before starting it (no attempt counted).
        case handedBack = "handed_back"
    }

    /// Re-sends so far, by reason (a reason never seen is absent).
    private(set) var counts: [Reason: UInt64] = [:]

    /// Counts one re-send for `reason`.
    mutating func record(_ reason: Reason) {
        counts[reason, default: 0] += 1
    }

    /// Re-sends so far, whatever the reason.
    var total: UInt64 { counts.values.reduce(0, +) }

    /// Re-sends so far for `reason`.
    subscript(reason: Reason) -> UInt64 { counts[reason] ?? 0 }
}

extension TaskResends.Reason {
    /// The reason a task whose attempt failed with `code` runs again; a worker loss is told apart by the
    /// coordinator (`WorkerLoss.reason`), which knows whether the worker or only the assignment was lost.
    init(retrying code: FailureCode) {
        switch code {
        case .workerLost: self = .workerLost
        case .timedOut: self = .timedOut
        case .inputMissing: self = .inputMissing
        default: self = .failed
        }
    }
}
