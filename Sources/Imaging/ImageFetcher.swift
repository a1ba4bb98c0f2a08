import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Downloads images over HTTP(S) (and reads local files when allowed), with a size limit, timeouts,
/// capped redirects and retries with backoff on transient failures.
///
/// Create one per process and call `shutdown()` before it goes away: it owns an `HTTPClient` and its
/// connection pool. Safe to use from many tasks at once.
public final class ImageFetcher: Sendable {
    public let configuration: FetchConfiguration
    private let client: HTTPClient

    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
        var http = HTTPClient.Configuration(
            redirectConfiguration: configuration.maxRedirects > 0
                ? .follow(max: configuration.maxRedirects, allowCycles: false) : .disallow,
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.readTimeout)),
            decompression: .disabled)
        // Fail fast on a refused connection: our own retries (with backoff, counted) handle it.
        http.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Fetches an image from `source`: an `http://` or `https://` URL, a `file://` URL, or a local path
    /// (the last two only when `allowLocalFiles`).
    ///
    /// The content must be a JPEG or a PNG, recognised by its magic bytes (a name or a Content-Type is
    /// not trusted). Throws `ImagingError`: `.download` (HTTP status, network, timeout, missing file),
    /// `.limit` (too large), `.decode` (not an image), `.cancelled`.
    public func fetch(_ source: String) async throws -> FetchedImage {
        switch try await fetchContent(source) {
        case .image(let image):
            return image
        case .manifest(let manifest):
            throw ImagingError(.decode, "\(source): not an image but a manifest of \(manifest.entries.count) images "
                + "(submit it to a batch, which expands it)")
        }
    }

    /// Fetches `source` like ``fetch(_:)``, and also accepts a ``Manifest`` (a text list of images).
    public func fetchContent(_ source: String) async throws -> FetchedContent {
        let data: [UInt8]
        let lower = source.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            data = try await download(source)
        } else {
            let path: String
            if lower.hasPrefix("file://") {
                var rest = String(source.dropFirst("file://".count))
                // file://localhost/path and file:///path
                if rest.lowercased().hasPrefix("localhost/") { rest = String(rest.dropFirst("localhost".count)) }
                guard rest.hasPrefix("/") else {
                    throw ImagingError(.download, "\(source): only file:///absolute/path URLs are supported")
                }
                path = LocalFileReader.percentDecoded(rest)
            } else if let colon = source.firstIndex(of: ":"), source[..<colon].allSatisfy({ $0.isLetter }), source[..<colon].count > 1,
                      source[colon...].hasPrefix("://") {
                throw ImagingError(.download, "\(source): unsupported URL scheme '\(source[..<colon])' (use http, https or file)")
            } else {
                path = source
            }
            guard configuration.allowLocalFiles else {
                throw ImagingError(.download, "\(source): reading local files is not allowed here (start the worker with --allow-local-files, or serve the file over HTTP)")
            }
            if Task.isCancelled { throw ImagingError.cancelledError }
            data = try LocalFileReader.read(path: path, maxBytes: configuration.maxBytes)
        }
        if let format = ImageFormat(sniffing: data) {
            return .image(FetchedImage(data: data, format: format))
        }
        if let manifest = Manifest(parsing: data, source: source) {
            return .manifest(manifest)
        }
        throw ImagingError(.decode, "\(source): \(ImageFormat.unrecognisedMessage(data))")
    }

    /// Shuts the HTTP client down. Call once, when the process no longer fetches.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    // MARK: - HTTP

    private func download(_ url: String) async throws -> [UInt8] {
        var attempt = 0
        while true {
            do {
                return try await downloadOnce(url)
            } catch let failure as AttemptFailure {
                if Task.isCancelled { throw ImagingError.cancelledError }
                guard failure.transient, attempt < configuration.retries else {
                    let attempts = attempt + 1
                    let suffix = failure.transient && attempts > 1 ? " (after \(attempts) attempts)" : ""
                    throw ImagingError(failure.error.kind, failure.error.message + suffix)
                }
                // Exponential backoff: retryDelay, 2·retryDelay, 4·retryDelay…
                let delay = configuration.retryDelay * (1 << min(attempt, 16))
                attempt += 1
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    throw ImagingError.cancelledError
                }
            }
        }
    }

    /// One attempt; failures are wrapped in `AttemptFailure`, which says whether a retry may help.
    private func downloadOnce(_ url: String) async throws -> [UInt8] {
        let request = HTTPClientRequest(url: url)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: Self.timeAmount(configuration.requestTimeout))
        } catch {
            throw classify(error, url: url)
        }
        let status = response.status
        guard (200..<300).contains(status.code) else {
            let transient = status.code >= 500
            let reason = status.reasonPhrase.isEmpty ? "" : " \(status.reasonPhrase)"
            var message = "\(url): HTTP \(status.code)\(reason)"
            if let final = response.history.last?.request.url, final != url {
                message += " (redirected to \(final))"
            }
            throw AttemptFailure(error: ImagingError(.download, message), transient: transient)
        }
        let limit = configuration.maxBytes
        if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > limit {
            throw AttemptFailure(error: ImagingError(
                .limit,
                "\(url): the server announces \(ImageLimits.mebibytes(length)) MiB, over the limit of \(ImageLimits.mebibytes(limit)) MiB; "
                    + "raise it with --max-bytes or FetchConfiguration.maxBytes"), transient: false)
        }
        var data: [UInt8] = []
        do {
            for try await var chunk in response.body {
                if Task.isCancelled { throw ImagingError.cancelledError }
                if data.count + chunk.readableBytes > limit {
                    // Leaving the loop abandons the body: the connection is closed, not drained.
                    throw AttemptFailure(error: ImagingError(
                        .limit,
                        "\(url): the body is larger than the limit of \(ImageLimits.mebibytes(limit)) MiB; "
                            + "raise it with --max-bytes or FetchConfiguration.maxBytes"), transient: false)
                }
                if let bytes = chunk.readBytes(length: chunk.readableBytes) { data.append(contentsOf: bytes) }
            }
        } catch let failure as AttemptFailure {
            throw failure
        } catch {
            throw classify(error, url: url)
        }
        return data
    }

    private func classify(_ error: any Error, url: String) -> any Error {
        if Task.isCancelled { return ImagingError.cancelledError }
        if let imaging = error as? ImagingError {
            return AttemptFailure(error: imaging, transient: false)
        }
        if error is CancellationError { return ImagingError.cancelledError }
        if let http = error as? HTTPClientError {
            switch http {
            case .readTimeout:
                return AttemptFailure(error: ImagingError(.download, "\(url): the server sent nothing for \(configuration.readTimeout) (read timeout)"), transient: true)
            case .connectTimeout:
                return AttemptFailure(error: ImagingError(.download, "\(url): could not connect within \(configuration.connectTimeout) (connect timeout)"), transient: true)
            case .deadlineExceeded:
                return AttemptFailure(error: ImagingError(.download, "\(url): the download took longer than \(configuration.requestTimeout)"), transient: true)
            case .redirectLimitReached:
                return AttemptFailure(error: ImagingError(.download, "\(url): too many redirects (more than \(configuration.maxRedirects))"), transient: false)
            case .redirectCycleDetected:
                return AttemptFailure(error: ImagingError(.download, "\(url): the redirects loop back on themselves"), transient: false)
            case .invalidURL, .emptyHost, .emptyScheme:
                return AttemptFailure(error: ImagingError(.download, "\(url): invalid URL"), transient: false)
            case .cancelled:
                return ImagingError.cancelledError
            case .remoteConnectionClosed:
                return AttemptFailure(error: ImagingError(.download, "\(url): the server closed the connection"), transient: true)
            default:
                return AttemptFailure(error: ImagingError(.download, "\(url): \(http)"), transient: true)
            }
        }
        let text = String(describing: error)
        let refused = text.contains("refused") || text.contains("ECONNREFUSED") || text.contains("errno: 111")
        let message = refused ? "\(url): connection refused (is the server running?)" : "\(url): \(text)"
        return AttemptFailure(error: ImagingError(.download, message), transient: true)
    }

    private struct AttemptFailure: Error {
        let error: ImagingError
        let transient: Bool
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
