import Imaging
import Operations

/// Fetches images: downloads `http(s)://` URLs and, when allowed, reads local files (`file://` URLs and
/// paths), with a size limit, timeouts and capped redirects. Transient download failures are retried by
/// the operations engine (each fetch is a ``FetchOperation`` with the configuration's
/// ``FetchConfiguration/retryPolicy``).
///
/// Create one per process and call ``shutdown()`` before it goes away: it owns the HTTP client and its
/// connections. Safe to use from many tasks at once.
public final class ImageFetcher: Sendable {
    /// The limits and timeouts of every fetch.
    public let configuration: FetchConfiguration
    private let http: HTTPDownloader
    /// Runs the ``FetchOperation``s of ``fetchContent(_:)`` (they mostly wait: no concurrency limit).
    private let queue = WorkQueue(name: "fetches")

    /// Creates a fetcher with `configuration`.
    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
        self.http = HTTPDownloader(configuration: configuration)
    }

    /// Fetches an image from `source`: an `http://` or `https://` URL, a `file://` URL, or a local path
    /// (the last two only when `allowLocalFiles`).
    ///
    /// The content must be a JPEG or a PNG, recognised by its magic bytes (a name or a Content-Type is
    /// not trusted). Throws `ImagingError`: `.download` (HTTP status, network, timeout, missing file),
    /// `.limit` (too large), `.decode` (not an image), `.cancelled`.
    public func fetch(_ source: String) async throws -> EncodedImage {
        switch try await fetchContent(source) {
        case .image(let image):
            return image
        case .manifest(let manifest):
            throw ImagingError(.decode, "\(source): not an image but a manifest of \(manifest.entries.count) images "
                + "(submit it to a batch, which expands it)")
        }
    }

    /// Fetches `source` like ``fetch(_:)``, and also accepts a ``Manifest`` (a text list of images).
    ///
    /// Runs a ``FetchOperation`` to its end; cancelling the calling task cancels it.
    public func fetchContent(_ source: String) async throws -> FetchedContent {
        let operation = FetchOperation(source: source, fetcher: self)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                operation.onCompletion { _ in finished.resume() }
                do {
                    try queue.addOperation(operation)
                } catch {
                    operation.cancel(error: error)
                }
            }
        } onCancel: {
            operation.cancel()
        }
        switch operation.state {
        case .finished:
            if let content = operation.output { return content }
        case .failed:
            if let error = operation.errors.first { throw error }
        default:
            break
        }
        throw ImagingError.cancelledError
    }

    /// One attempt at `source`, without retries: what ``FetchOperation`` runs each time.
    ///
    /// Throws `DownloadFailure` for a failed download (which says whether to retry), else `ImagingError`.
    func attempt(_ source: String) async throws -> FetchedContent {
        let data: [UInt8]
        switch try FetchSource(source) {
        case .http(let url):
            data = try await http.download(url)
        case .localFile(let path):
            guard configuration.allowLocalFiles else {
                throw ImagingError(.download, "\(source): reading local files is not allowed here (start the worker with --allow-local-files, or serve the file over HTTP)")
            }
            if Task.isCancelled { throw ImagingError.cancelledError }
            data = try LocalFileReader.read(path: path, maxBytes: configuration.maxBytes)
        }
        return try FetchedContent(recognising: data, from: source)
    }

    /// Shuts the HTTP client down. Call once, when the process no longer fetches.
    public func shutdown() async throws {
        try await http.shutdown()
    }
}
