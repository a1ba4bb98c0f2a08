/// How an operation retries `execute()` when it throws (assign to ``AsyncOperation/retryPolicy``).
///
/// Attempt `n` (1-based) that throws is retried after `initialDelay × multiplier^(n-1)`, capped at
/// `maxDelay`, while `n < maxAttempts` and `shouldRetry(error)` is `true`; with ``Jitter/full`` the wait
/// is a uniformly random part of that (spreading the retries of many failures over time). An error that
/// asks for a longer wait (`requestedDelay`, e.g. an HTTP `Retry-After`) gets it, capped at
/// `maxRequestedDelay` (by default `maxDelay`). Cancellation is never retried, and the backoff sleep is
/// cancelled with the operation.
public struct RetryPolicy: Sendable {
    /// How much of the backoff is waited.
    public enum Jitter: Sendable, Equatable {
        /// All of it.
        case none
        /// A uniformly random part of it, from nothing to all ("full jitter").
        case full
    }

    /// The total number of attempts, the first included (at least 1).
    public var maxAttempts: Int
    /// The delay before the second attempt.
    public var initialDelay: Duration
    /// The factor applied to the delay after each attempt.
    public var multiplier: Double
    /// The longest delay.
    public var maxDelay: Duration
    /// Decides whether an error is worth retrying; by default every error is.
    public var shouldRetry: @Sendable (any Error) -> Bool
    /// The wait an error asks for before the next attempt, if any (e.g. a server's `Retry-After`); by
    /// default none.
    public var requestedDelay: @Sendable (any Error) -> Duration?
    /// Whether the backoff is randomised; by default it is not.
    public var jitter: Jitter = .none
    /// The longest wait honoured when an error asks for one (``requestedDelay``); `nil`: `maxDelay`.
    public var maxRequestedDelay: Duration?

    /// Creates a policy.
    public init(
        maxAttempts: Int,
        initialDelay: Duration = .milliseconds(100),
        multiplier: Double = 2,
        maxDelay: Duration = .seconds(30),
        shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true },
        requestedDelay: @escaping @Sendable (any Error) -> Duration? = { _ in nil }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.shouldRetry = shouldRetry
        self.requestedDelay = requestedDelay
    }

    /// The delay to wait after failed attempt `attempt` (1-based) before the next one.
    public func delay(afterAttempt attempt: Int) -> Duration {
        let factor = pow(multiplier, Double(max(0, attempt - 1)))
        let delay = initialDelay * factor
        return delay < maxDelay ? delay : maxDelay
    }

    /// The delay to wait after failed attempt `attempt` (1-based) threw `error`: the backoff, or what
    /// the error asks for (``requestedDelay``) when that is longer, never more than `maxDelay`.
    public func delay(afterAttempt attempt: Int, error: any Error) -> Duration {
        delay(
            afterAttempt: attempt, requested: requestedDelay(error),
            fraction: jitter == .full ? Double.random(in: 0..<1) : 1)
    }

    /// The delay after failed attempt `attempt` (1-based) when the failure asked for `requested`, with
    /// `fraction` (0...1) the random part of the backoff that ``Jitter/full`` waits: the (jittered) backoff,
    /// or `requested` when that is longer, never more than `maxRequestedDelay`. Deterministic, for tests.
    public func delay(afterAttempt attempt: Int, requested: Duration?, fraction: Double) -> Duration {
        var backoff = delay(afterAttempt: attempt)
        if jitter == .full { backoff = backoff * min(1, max(0, fraction.isNaN ? 1 : fraction)) }
        guard let requested, requested > backoff else { return backoff }
        let cap = maxRequestedDelay ?? maxDelay
        return requested < cap ? requested : cap
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            result *= base
            remaining -= 1
            if result > 1e12 { break }
        }
        return result
    }
}
