import Operations
import Wire

/// How the coordinator retries the tasks of one batch: which failures are worth another attempt, how
/// many attempts a task gets, and how long to wait before each. A plain value, free of clocks and I/O
/// (the random part of the wait is passed in), so the rules are tested without a cluster.
///
/// Rules:
/// - Retried: a failure the worker marked transient (``TaskFailure/isTransient``: connection refused or
///   reset, timeouts, HTTP 408, 429 and 5xx), a task the coordinator timed out (``FailureCode/timedOut``),
///   and an attempt lost with its worker (``FailureCode/workerLost``: it died or left while running the
///   task, or never received it). A worker loss counts against the retries like any failure, and a task
///   lost with ``maxWorkerLosses`` workers fails even if retries are left ("worker lost N times"): an
///   input that kills its workers does not kill more. Never retried: cancellation, bytes that are not an image, a limit, an
///   internal error, and any failure not marked transient (other HTTP 4xx, a manifest nested too deep).
/// - A task gets `retries + 1` attempts at most (`SubmitBatch.retries`, 0...10, default 2).
/// - The wait after attempt `n` is exponential backoff with full jitter: a uniformly random part of
///   `initialDelay × 2^(n-1)`, capped at `maxBackoff`. An origin's `Retry-After` is honoured when it asks
///   for longer: one in the past asks for nothing, one further than ``RetryAfterClamp/longest`` (5
///   minutes) is cut to it.
struct TaskRetrySchedule: Sendable, Equatable {
    /// What to do after a failed attempt.
    enum Decision: Equatable, Sendable {
        /// Try again after this wait.
        case retry(after: Duration)
        /// Give up: the task fails with this failure.
        case fail
    }

    /// Retries of each task when a batch does not say.
    static let defaultRetries = 2
    /// The retries a batch may ask for.
    static let allowedRetries: ClosedRange<UInt32> = 0...10
    /// The backoff before the first retry; it doubles for each later one.
    static let initialDelay: Duration = .milliseconds(500)
    /// Workers a task may be lost with before it fails, whatever its retries.
    static let maxWorkerLosses = 3
    /// The longest backoff (a `Retry-After` may ask for more, up to ``RetryAfterClamp/longest``).
    static let maxBackoff: Duration = .seconds(30)

    /// Retries of each task after its first attempt. (The only stored value: every remote operation
    /// holds its schedule, so it stays one byte.)
    let retries: UInt8

    init(retries: Int = Self.defaultRetries) {
        self.retries = UInt8(min(max(0, retries), Int(Self.allowedRetries.upperBound)))
    }

    /// The engine's backoff maths for this schedule: exponential, full jitter, `Retry-After` capped.
    private var policy: RetryPolicy {
        var policy = RetryPolicy(
            maxAttempts: Int(retries) + 1, initialDelay: Self.initialDelay, multiplier: 2,
            maxDelay: Self.maxBackoff)
        policy.jitter = .full
        policy.maxRequestedDelay = RetryAfterClamp.longest
        return policy
    }

    /// The schedule a submission asks for (``defaultRetries`` when it does not say).
    init(_ submit: SubmitBatch) {
        self.init(retries: submit.retries.map(Int.init) ?? Self.defaultRetries)
    }

    /// Whether another attempt may cure `failure`.
    static func isRetryable(_ failure: TaskFailure) -> Bool {
        switch failure.code {
        case .timedOut, .workerLost: true
        case .cancelled, .decode, .limit, .internal, .dependency, .inputMissing, .upload: false
        case .download, .processing, .sink, .unspecified: failure.isTransient
        }
    }

    /// What to do after attempt `attempt` (1-based, of this task) failed with `failure`; `fraction` (0..<1)
    /// is the random part of the backoff to wait. `workerLosses` counts the attempts so far (this one
    /// included) lost with their workers.
    func decide(after failure: TaskFailure, attempt: Int, fraction: Double, workerLosses: Int = 0) -> Decision {
        guard Self.isRetryable(failure), attempt <= Int(retries) else { return .fail }
        if failure.code == .workerLost, workerLosses >= Self.maxWorkerLosses { return .fail }
        return .retry(
            after: policy.delay(
                afterAttempt: attempt, requested: RetryAfterClamp.duration(milliseconds: failure.retryAfterMs),
                fraction: fraction))
    }

    /// The failure a task ends with when it is not tried again after `failure`: a worker loss says how
    /// many workers the task was lost with ("worker lost 2 times; the last: …").
    static func finalFailure(_ failure: TaskFailure, workerLosses: Int) -> TaskFailure {
        guard failure.code == .workerLost, workerLosses > 0 else { return failure }
        var final = failure
        final.message =
            "worker lost \(workerLosses) time\(workerLosses == 1 ? "" : "s"), not tried again; the last: \(failure.message)"
        return final
    }

    /// What is wrong with a batch's requested retries, or `nil` when they are allowed.
    static func problem(retries: UInt32?) -> String? {
        guard let retries, !allowedRetries.contains(retries) else { return nil }
        return "retries must be between \(allowedRetries.lowerBound) and \(allowedRetries.upperBound) (got \(retries))"
    }
}
