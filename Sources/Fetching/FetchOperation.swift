import Imaging
import Operations

/// Fetches one source, an image or a manifest (a text list of images), as an operation of the engine:
/// what a worker runs for a download task, so that a batch can grow from a manifest.
///
/// Each `execute()` is one attempt. The operation carries the fetcher's
/// ``FetchConfiguration/retryPolicy``, so the engine retries transient download failures with
/// exponential backoff; the error it finally fails with is an `ImagingError` that counts the attempts.
/// Cancelling the operation abandons the transfer.
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

    /// Creates a fetch of `source` through `fetcher` (which holds the limits and the HTTP client), with
    /// the fetcher's retry policy.
    public init(source: String, fetcher: ImageFetcher, priority: OperationPriority = .normal) {
        self.source = source
        self.fetcher = fetcher
        super.init(name: "download \(source)", priority: priority)
        retryPolicy = fetcher.configuration.retryPolicy
    }

    /// One attempt: fetches the bytes and recognises an image or a manifest. A transient failure that
    /// the policy will retry is thrown as it is; any other as the final `ImagingError`.
    public override func produce() async throws -> FetchedContent {
        do {
            return try await fetcher.attempt(source)
        } catch let failure as DownloadFailure {
            let attempt = max(1, self.attempt)
            if failure.isTransient, let policy = retryPolicy, attempt < policy.maxAttempts, !Task.isCancelled {
                throw failure
            }
            throw failure.finalError(attempts: attempt)
        }
    }
}
