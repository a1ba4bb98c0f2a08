import Foundation
import Imaging
import Operations
import Runtime

/// Fetches images: downloads `http(s)://` URLs and, when allowed, reads local files (`file://` URLs and
/// paths), with a size limit, timeouts, a minimum rate, a total time limit and capped redirects.
/// Transient download failures are retried by the operations engine (each fetch is a
/// ``FetchOperation`` with the configuration's ``FetchConfiguration/retryPolicy``).
///
/// Threads: downloads run on one thread of the fetcher's own that drives libcurl (a `TransferLoop`);
/// local files are read on a few threads of its own. Neither blocks Swift's cooperative pool.
///
/// Create one per process and call ``shutdown()`` before it goes away (releasing it also stops its
/// threads, without waiting). Safe to use from many tasks at once.
public final class ImageFetcher: Sendable {
    /// The limits and timeouts of every fetch.
    public let configuration: FetchConfiguration
    private let http: HTTPDownloader
    /// Threads for reading local files (blocking I/O, never on Swift's cooperative pool).
    private let files: ComputeThreads
    /// Runs the ``FetchOperation``s of ``fetchContent(_:)`` (they mostly wait: no concurrency limit).
    private let queue = WorkQueue(name: "fetches")

    /// Creates a fetcher with `configuration`, and starts its threads.
    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
        self.http = HTTPDownloader(configuration: configuration)
        self.files = ComputeThreads(name: "files", count: 2)
    }

    deinit {
        files.shutdown()
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
            throw ImagingError(
                .decode,
                "\(SourceRedaction.redact(source)): not an image but a manifest of \(manifest.entries.count) images "
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

    /// One attempt at `source`, without retries: what ``FetchOperation`` runs each time. A download must
    /// end by `deadline`.
    ///
    /// Throws `DownloadFailure` for a failed download (which says whether to retry), else `ImagingError`.
    func attempt(
        _ source: String, deadline: ContinuousClock.Instant?, s3Endpoint: String? = nil
    ) async throws -> FetchedContent {
        let data: [UInt8]
        switch try FetchSource(source) {
        case .http(let url):
            data = try await http.download(url, deadline: deadline)
        case .s3(let location):
            guard let credentials = configuration.s3Credentials else {
                throw ImagingError(
                    .download, "\(location): this worker has no S3 credentials: \(S3Credentials.howToSet)")
            }
            do {
                data = try await http.download(
                    location.url(endpoint: s3Endpoint, region: credentials.region), deadline: deadline,
                    signing: credentials)
            } catch let failure as DownloadFailure {
                // The message names the object, not only the endpoint's URL.
                throw DownloadFailure(
                    error: ImagingError(failure.error.kind, "\(location): \(failure.error.message)"),
                    isTransient: failure.isTransient, retryAfter: failure.retryAfter)
            }
        case .localFile(let path):
            guard configuration.allowLocalFiles else {
                throw ImagingError(
                    .download,
                    "\(source): reading local files is not allowed here (start the worker with --allow-local-files, or serve the file over HTTP)"
                )
            }
            if Task.isCancelled { throw ImagingError.cancelledError }
            let maxBytes = configuration.maxBytes
            do {
                data = try await files.run { cancellation in
                    try LocalFileReader.read(path: path, maxBytes: maxBytes, isCancelled: { cancellation.isRaised })
                }
            } catch is ComputeThreadsError {
                throw ImagingError(.download, "\(source): the fetcher was shut down before the file was read")
            }
        }
        return try FetchedContent(recognising: data, from: source)
    }

    /// Writes `bytes` as the object at `location` with one signed PUT (libcurl's AWS SigV4), so that the
    /// object is whole or absent: S3 stores nothing of a PUT that did not complete.
    ///
    /// - Throws: `S3Error`, naming the object and the reason (never the credentials).
    public func upload(_ bytes: [UInt8], contentType: String, to location: S3Location, endpoint: String?) async throws {
        guard let credentials = configuration.s3Credentials else {
            throw S3Error("\(location): this worker has no S3 credentials: \(S3Credentials.howToSet)")
        }
        do {
            try await http.upload(
                bytes, contentType: contentType, to: location.url(endpoint: endpoint, region: credentials.region),
                signing: credentials)
        } catch let failure as DownloadFailure {
            throw S3Error("\(location): \(failure.error.message)", isTransient: failure.isTransient)
        } catch {
            throw S3Error("\(location): \(error)")
        }
    }

    /// Stops the fetcher's threads (a download still running fails) and waits for the transfer thread.
    /// Call once, when the process no longer fetches.
    public func shutdown() async {
        files.shutdown()
        await http.shutdown()
    }
}
