/// How an operation retries `execute()` when it throws (assign to ``AsyncOperation/retryPolicy``).
///
/// Attempt `n` (1-based) that throws is retried after `initialDelay × multiplier^(n-1)`, capped at
/// `maxDelay`, while `n < maxAttempts` and `shouldRetry(error)` is `true`; an error that asks for a longer
/// wait (`requestedDelay`, e.g. an HTTP `Retry-After`) gets it, capped at `maxDelay` too. Cancellation is
/// never retried, and the backoff sleep is cancelled with the operation.
public struct RetryPolicy: Sendable {
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
        let backoff = delay(afterAttempt: attempt)
        guard let requested = requestedDelay(error), requested > backoff else { return backoff }
        return requested < maxDelay ? requested : maxDelay
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 { result *= base; remaining -= 1; if result > 1e12 { break } }
        return result
    }
}
