import Wire

/// What the coordinator remembers of a retired batch: enough to say what became of it.
struct RetiredBatch: Equatable {
    let summary: BatchFinished
    let itemCount: Int
    let rule: BatchRetention.Rule
    let retiredAt: ContinuousClock.Instant

    /// Why a request about the batch finds nothing, for a `Refusal` (`UNKNOWN_BATCH`).
    func refusalReason(now: ContinuousClock.Instant) -> String {
        let policy: String
        switch rule {
        case .count(let limit):
            policy =
                "this coordinator keeps the last \(limit) finished batches (--keep-finished-batches, "
                + "SHIFTWORK_KEEP_FINISHED_BATCHES)"
        case .age(let limit):
            policy =
                "this coordinator keeps a finished batch for \(BatchRetention.describe(limit)) (--keep-finished-for, "
                + "SHIFTWORK_KEEP_FINISHED_FOR)"
        }
        return
            "batch \(summary.batchID) finished and was retired \(BatchRetention.describe(now - retiredAt)) ago: \(policy). "
            + "It had \(itemCount) item\(itemCount == 1 ? "" : "s"): \(summary.succeeded) succeeded, \(summary.failed) failed, \(summary.cancelled) "
            + "cancelled; its items and results are no longer kept. Start the coordinator with a larger retention to keep them longer."
    }
}
