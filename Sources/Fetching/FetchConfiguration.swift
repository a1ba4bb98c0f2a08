import Operations

/// How an ``ImageFetcher`` downloads images and reads local files.
public struct FetchConfiguration: Sendable, Equatable {
    /// Whether `file://` URLs and plain paths may be read. Off by default: a worker that fetches URLs
    /// from the network must not be talked into reading its own disk.
    public var allowLocalFiles: Bool
    /// The largest image accepted, in bytes; a body that grows past it is abandoned. Default 100 MiB.
    public var maxBytes: Int
    /// How long establishing a connection may take. Default 10 s.
    public var connectTimeout: Duration
    /// How long the server may stay silent while a response is expected or streaming. Default 30 s.
    public var readTimeout: Duration
    /// The longest a whole attempt (redirects and body included) may take. Default 5 minutes.
    public var requestTimeout: Duration
    /// Redirects followed before giving up. Default 5.
    public var maxRedirects: Int
    /// Extra attempts after a transient failure (HTTP 5xx, connection refused or reset, timeouts); never
    /// after a 4xx. Default 2.
    public var retries: Int
    /// The delay before the first retry; it doubles for each later one. Default 250 ms.
    public var retryDelay: Duration

    public init(
        allowLocalFiles: Bool = false,
        maxBytes: Int = 100 * 1024 * 1024,
        connectTimeout: Duration = .seconds(10),
        readTimeout: Duration = .seconds(30),
        requestTimeout: Duration = .seconds(300),
        maxRedirects: Int = 5,
        retries: Int = 2,
        retryDelay: Duration = .milliseconds(250)
    ) {
        self.allowLocalFiles = allowLocalFiles
        self.maxBytes = maxBytes
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.requestTimeout = requestTimeout
        self.maxRedirects = maxRedirects
        self.retries = retries
        self.retryDelay = retryDelay
    }

    /// The engine's retry policy for a download (``FetchOperation`` sets it): `retries + 1` attempts,
    /// `retryDelay` doubling after each, and only failures that a retry may cure.
    public var retryPolicy: RetryPolicy {
        RetryPolicy(
            maxAttempts: max(0, retries) + 1, initialDelay: retryDelay, multiplier: 2,
            shouldRetry: { ($0 as? DownloadFailure)?.isTransient ?? false })
    }
}
