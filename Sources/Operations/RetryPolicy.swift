/// How an operation retries `execute()` when it throws (assign to ``AsyncOperation/retryPolicy``).
///
/// Attempt `n` (1-based) that throws is retried after `initialDelay × multiplier^(n-1)`, capped at
/// `maxDelay`, while `n < maxAttempts` and `shouldRetry(error)` is `true`. Cancellation is never
/// retried, and the backoff sleep is cancelled with the operation.
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

    /// Creates a policy.
    public init(
        maxAttempts: Int,
        initialDelay: Duration = .milliseconds(100),
        multiplier: Double = 2,
        maxDelay: Duration = .seconds(30),
        shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.shouldRetry = shouldRetry
    }

    /// The delay to wait after failed attempt `attempt` (1-based) before the next one.
    public func delay(afterAttempt attempt: Int) -> Duration {
        let factor = pow(multiplier, Double(max(0, attempt - 1)))
        let delay = initialDelay * factor
        return delay < maxDelay ? delay : maxDelay
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 { result *= base; remaining -= 1; if result > 1e12 { break } }
        return result
    }
}
