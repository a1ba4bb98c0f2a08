/// How long the coordinator keeps a finished batch for `status`, `results` (`FetchResults`) and cancels
/// that come late: the retention policy, in one place. A finished batch is kept while it is among the
/// newest `maxFinishedBatches` finished ones **and** finished less than `maxFinishedAge` ago; then it is
/// retired: its items, outcomes and (with a data directory) results are let go, and only a short record
/// stays (`RetiredBatch`), so that a question about it is answered with why it is gone.
public struct BatchRetention: Sendable, Equatable {
    /// At most this many finished batches are kept (`--keep-finished-batches`); the oldest is retired first.
    public var maxFinishedBatches: Int
    /// A finished batch is retired this long after it finished (`--keep-finished-for`).
    public var maxFinishedAge: Duration

    /// How many retired batches are remembered (ID, summary, when and why), oldest forgotten first: about
    /// 100 bytes each, so at most about 1 MB.
    static let retiredBatchesRemembered = 10_000

    /// The defaults: 100 finished batches, for an hour.
    public init(
        maxFinishedBatches: Int = ClusterDefaults.keepFinishedBatches,
        maxFinishedAge: Duration = ClusterDefaults.keepFinishedFor
    ) {
        self.maxFinishedBatches = max(0, maxFinishedBatches)
        self.maxFinishedAge = max(.zero, maxFinishedAge)
    }

    /// `duration` in words for a message: "45 s", "12 min", "3 h".
    static func describe(_ duration: Duration) -> String {
        let seconds = max(0, duration.components.seconds)
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 120 * 60 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h"
    }

    /// Why a batch was retired.
    enum Rule: Equatable {
        /// Newer finished batches pushed it out (`maxFinishedBatches`).
        case count(Int)
        /// It finished longer ago than `maxFinishedAge`.
        case age(Duration)
    }
}
