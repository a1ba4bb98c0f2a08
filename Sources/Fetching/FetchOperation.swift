import Imaging
import Operations
import Runtime

/// Fetches one source, an image or a manifest (a text list of images), as an operation of the engine:
/// what a worker runs for a download task, so that a batch can grow from a manifest.
///
/// Each `execute()` is one attempt. The operation carries the fetcher's
/// ``FetchConfiguration/retryPolicy``, so the engine retries transient download failures with
/// exponential backoff (or the server's `Retry-After`), all within the
/// ``FetchConfiguration/totalTimeLimit`` counted from the first attempt. The error it finally fails
/// with is an `ImagingError` that counts the attempts. Cancelling the operation abandons the transfer.
///
/// Its output's image injects into a `TiltShiftOperation`:
/// ```swift
/// let fetch = FetchOperation(source: url, fetcher: fetcher)
/// let tiltShift = TiltShiftOperation(parameters: .coreImage)
/// try tiltShift.injectResult(from: fetch, policy: .requireSuccess) { tiltShift, fetch, _ in
///     guard case .image(let image) = fetch.output else { throw ImagingError(.decode, "\(url): not an image") }
///     tiltShift.input = image
/// }
/// try queue.addOperations([fetch, tiltShift])
/// ```
public final class FetchOperation: ResultOperation<FetchedContent>, @unchecked Sendable {
    /// The URL or path to fetch.
    public let source: String
    private let fetcher: ImageFetcher
    /// The S3-compatible endpoint for an `s3://` source (`nil` or empty: AWS).
    public let s3Endpoint: String?
    /// When the total time limit ends: set by the first attempt.
    private let deadline = InlineLock<ContinuousClock.Instant?>(nil)
    private let advice = InlineLock<RetryAdvice?>(nil)

    /// Once the fetch failed with a download error: whether another attempt (elsewhere, later) may
    /// succeed, and the wait the server asked for. `nil` before, after a success, and for other errors.
    public var retryAdvice: RetryAdvice? { advice.withLock { $0 } }

    /// Creates a fetch of `source` through `fetcher` (which holds the limits and the HTTP client), with
    /// the fetcher's retry policy.
    public init(source: String, fetcher: ImageFetcher, s3Endpoint: String? = nil, priority: OperationPriority = .normal)
    {
        self.source = source
        self.s3Endpoint = s3Endpoint
        self.fetcher = fetcher
        super.init(name: "download \(SourceRedaction.redact(source))", priority: priority)
        retryPolicy = fetcher.configuration.retryPolicy
    }

    /// One attempt: fetches the bytes and recognises an image or a manifest. A transient failure that
    /// the policy will retry in time is thrown as it is; any other as the final `ImagingError`.
    public override func produce() async throws -> FetchedContent {
        let limit = fetcher.configuration.totalTimeLimit
        let deadline = self.deadline.withLock { stored in
            let deadline = stored ?? ContinuousClock.now + limit
            stored = deadline
            return deadline
        }
        do {
            return try await fetcher.attempt(source, deadline: deadline, s3Endpoint: s3Endpoint)
        } catch let failure as DownloadFailure {
            let attempt = max(1, self.attempt)
            advice.withLock { $0 = RetryAdvice(isTransient: failure.isTransient, retryAfter: failure.retryAfter) }
            guard failure.isTransient, let policy = retryPolicy, attempt < policy.maxAttempts, !Task.isCancelled else {
                throw failure.finalError(attempts: attempt)
            }
            guard ContinuousClock.now + policy.delay(afterAttempt: attempt, error: failure) < deadline else {
                throw failure.finalError(
                    attempts: attempt,
                    note: "no time left for another within the total time limit of \(limit); raise it with "
                        + "--download-time-limit or FetchConfiguration.totalTimeLimit")
            }
            throw failure
        }
    }
}
