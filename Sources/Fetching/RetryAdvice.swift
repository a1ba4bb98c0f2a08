/// What a failed download says about trying again: whether another attempt may succeed, and how long the
/// server asked to wait first. ``FetchOperation/retryAdvice`` holds it once the operation failed, so that
/// a caller that retries elsewhere (the cluster's coordinator) can decide without reading messages.
public struct RetryAdvice: Sendable, Equatable {
    /// `true` for connection refused or reset, timeouts, a rate below the minimum, HTTP 408, 429 and 5xx;
    /// `false` for the others (other 4xx, limits, redirects to other schemes, bad URLs, missing files).
    public let isTransient: Bool
    /// The wait the server asked for (`Retry-After`), if any; a date in the past reads as zero.
    public let retryAfter: Duration?

    /// Creates advice.
    public init(isTransient: Bool, retryAfter: Duration? = nil) {
        self.isTransient = isTransient
        self.retryAfter = retryAfter
    }
}
