import ArgumentParser
import Cluster

/// `--retries` and `--deadline`: how often a batch's tasks are tried again after a transient failure, and
/// when its unfinished items are given up (`submit`, `run`). Each falls back to a `SHIFTWORK_*` variable.
struct RetryOptions: ParsableArguments {
    /// The retries a batch may ask for (the coordinator refuses others too).
    static let allowedRetries = 0...10
    /// The longest deadline: 30 days.
    static let allowedDeadline = 1...2_592_000

    @Option(
        help:
            "Retries of each task after a transient failure (connection refused or reset, timeouts, HTTP 408, 429, 5xx, a task timed out), with exponential backoff and jitter, on another worker where one is free; \(allowedRetries.lowerBound)...\(allowedRetries.upperBound) (env SHIFTWORK_RETRIES; default 2)."
    )
    var retries: Int?

    @Option(
        help: "Seconds after which the batch's unfinished items are cancelled (env SHIFTWORK_DEADLINE; default: none).")
    var deadline: Int?

    /// `submission` with these settings, validated.
    func applied(to submission: BatchSubmission) throws -> BatchSubmission {
        var submission = submission
        let retries = try Environment.resolve(retries, "RETRIES", default: 2)
        guard Self.allowedRetries.contains(retries) else {
            throw ValidationError(
                "--retries (or SHIFTWORK_RETRIES) must be between \(Self.allowedRetries.lowerBound) and "
                    + "\(Self.allowedRetries.upperBound) (got \(retries))")
        }
        submission.retries = retries
        let deadline = try Environment.resolve(deadline, "DEADLINE", default: 0)
        guard deadline == 0 || Self.allowedDeadline.contains(deadline) else {
            throw ValidationError(
                "--deadline (or SHIFTWORK_DEADLINE) must be between \(Self.allowedDeadline.lowerBound) and "
                    + "\(Self.allowedDeadline.upperBound) seconds (got \(deadline))")
        }
        submission.deadlineSeconds = deadline
        return submission
    }
}
