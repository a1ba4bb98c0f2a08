/// The deadlines batches were submitted with (`submit --deadline SECONDS`), free of I/O: when one passes,
/// the coordinator cancels the batch's unfinished items with that cause. A deadline counts from when the
/// batch was accepted, also for a batch a restarted coordinator carries on with: the journal keeps the
/// wall-clock time of its acceptance, so the time the coordinator was down counts too.
struct BatchDeadlines {
    /// The longest deadline a batch may ask for: 30 days.
    static let allowedSeconds: ClosedRange<UInt32> = 1...2_592_000

    private var deadlines: [String: (at: ContinuousClock.Instant, seconds: UInt32)] = [:]

    var isEmpty: Bool { deadlines.isEmpty }

    /// Sets a batch's deadline `seconds` after `now` (none for 0).
    mutating func set(_ batchID: String, seconds: UInt32, from now: ContinuousClock.Instant) {
        guard seconds > 0 else { return }
        deadlines[batchID] = (now + .seconds(Int64(seconds)), seconds)
    }

    /// Sets the deadline of a batch accepted at `acceptedUnixMilliseconds` (wall clock, from the journal),
    /// `seconds` after that; `nowUnixMilliseconds` is the wall clock at `now`. A deadline passed already
    /// is due at once; an acceptance time in the future (the clock was set back) counts as now.
    mutating func set(
        _ batchID: String, seconds: UInt32, acceptedUnixMilliseconds: UInt64, nowUnixMilliseconds: UInt64,
        now: ContinuousClock.Instant
    ) {
        guard seconds > 0 else { return }
        let elapsed =
            nowUnixMilliseconds > acceptedUnixMilliseconds ? nowUnixMilliseconds - acceptedUnixMilliseconds : 0
        let remaining = Int64(seconds) * 1000 - Int64(clamping: elapsed)
        deadlines[batchID] = (now + .milliseconds(max(0, remaining)), seconds)
    }

    /// The batches whose deadline has passed, with their deadline in seconds; they are forgotten.
    mutating func expired(now: ContinuousClock.Instant) -> [(batchID: String, seconds: UInt32)] {
        guard !deadlines.isEmpty else { return [] }
        let due = deadlines.filter { now >= $0.value.at }
        for batchID in due.keys { deadlines[batchID] = nil }
        return due.map { ($0.key, $0.value.seconds) }.sorted { $0.batchID < $1.batchID }
    }

    /// What is wrong with a requested deadline, or `nil` (0 means none).
    static func problem(seconds: UInt32) -> String? {
        guard seconds != 0, !allowedSeconds.contains(seconds) else { return nil }
        return "the deadline must be between \(allowedSeconds.lowerBound) and \(allowedSeconds.upperBound) seconds, "
            + "or 0 for none (got \(seconds))"
    }
}

/// The error with which a batch's unfinished items are cancelled when its deadline passes.
struct BatchDeadlineError: Error, CustomStringConvertible {
    let seconds: UInt32
    var description: String { "cancelled: the batch's deadline of \(seconds) s passed (submit --deadline)" }
}
