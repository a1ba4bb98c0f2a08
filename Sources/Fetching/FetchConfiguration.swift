import Operations

/// How an ``ImageFetcher`` downloads images and reads local files.
public struct FetchConfiguration: Sendable, Equatable {
    /// Whether `file://` URLs and plain paths may be read. Off by default: a worker that fetches URLs
    /// from the network must not be talked into reading its own disk.
    public var allowLocalFiles: Bool
    /// The largest image accepted, in bytes: a `Content-Length` over it is refused before the body, and
    /// a body that grows past it is abandoned at once. Default 100 MiB.
    public var maxBytes: Int
    /// How long establishing a connection (name resolution and TLS included) may take. Default 10 s.
    public var connectTimeout: Duration
    /// How long the server may stay silent (no byte since the request started, or since the last one).
    /// Default 30 s.
    public var readTimeout: Duration
    /// The longest one attempt (redirects and body included) may take. Default 5 minutes.
    public var requestTimeout: Duration
    /// The lowest average transfer rate, in bytes per second, over ``minimumRateWindow``: an attempt
    /// that stays below it fails (and is retried). 0 turns the check off. Default 1 KiB/s.
    public var minimumRate: Int
    /// The window over which ``minimumRate`` is measured, in whole seconds (at least 1). Default 30 s.
    public var minimumRateWindow: Duration
    /// The longest a download may take, every attempt and every wait between them included. Default 10
    /// minutes.
    public var totalTimeLimit: Duration
    /// Redirects followed before giving up (only to `http` and `https` URLs). Default 5.
    public var maxRedirects: Int
    /// Extra attempts after a transient failure (connection refused or reset, timeouts, a rate below
    /// the minimum, HTTP 408, 429 and 5xx); never after another 4xx, a limit or bytes that are not an
    /// image. Default 2.
    public var retries: Int
    /// The delay before the first retry; it doubles for each later one. Default 250 ms.
    public var retryDelay: Duration
    /// The longest wait between two attempts, a server's `Retry-After` included. Default 30 s.
    public var maxRetryDelay: Duration
    /// Which addresses a download, a manifest, an `s3://` object, the S3 endpoint and an S3 sink may connect
    /// to, judged on the resolved address of every connection, redirects included (``SourcePolicy``).
    /// Default ``SourcePolicy/unrestricted`` (a library user, `shiftwork run`, the embedded cluster: the
    /// user's own machine); `shiftwork worker` sets ``SourcePolicy/restricted(allowing:denying:)``, which
    /// denies loopback, link-local (the cloud metadata service), unspecified, multicast and broadcast.
    public var sourcePolicy: SourcePolicy = .unrestricted
    /// The credentials `s3://` sources and sinks are signed with (`S3Credentials.load()` at start-up);
    /// `nil`: none, and `s3://` requests fail saying what to set.
    public var s3Credentials: S3Credentials?

    public init(
        allowLocalFiles: Bool = false,
        maxBytes: Int = 100 * 1024 * 1024,
        connectTimeout: Duration = .seconds(10),
        readTimeout: Duration = .seconds(30),
        requestTimeout: Duration = .seconds(300),
        minimumRate: Int = 1024,
        minimumRateWindow: Duration = .seconds(30),
        totalTimeLimit: Duration = .seconds(600),
        maxRedirects: Int = 5,
        retries: Int = 2,
        retryDelay: Duration = .milliseconds(250),
        maxRetryDelay: Duration = .seconds(30)
    ) {
        self.allowLocalFiles = allowLocalFiles
        self.maxBytes = maxBytes
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.requestTimeout = requestTimeout
        self.minimumRate = minimumRate
        self.minimumRateWindow = minimumRateWindow
        self.totalTimeLimit = totalTimeLimit
        self.maxRedirects = maxRedirects
        self.retries = retries
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
    }

    /// The engine's retry policy for a download (``FetchOperation`` sets it): `retries + 1` attempts,
    /// `retryDelay` doubling after each (or the server's `Retry-After` when longer), at most
    /// `maxRetryDelay`, and only after failures that a retry may cure.
    public var retryPolicy: RetryPolicy {
        RetryPolicy(
            maxAttempts: max(0, retries) + 1, initialDelay: retryDelay, multiplier: 2, maxDelay: maxRetryDelay,
            shouldRetry: { ($0 as? DownloadFailure)?.isTransient ?? false },
            requestedDelay: { ($0 as? DownloadFailure)?.retryAfter })
    }
}
