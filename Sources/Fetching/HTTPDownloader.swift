import AsyncHTTPClient
import Imaging
import NIOCore
import NIOHTTP1

/// Downloads one URL per call, with a size limit, timeouts and capped redirects; never retries (the
/// engine does, see ``FetchOperation``). Owns an `HTTPClient` and its connection pool.
final class HTTPDownloader: Sendable {
    private let configuration: FetchConfiguration
    private let client: HTTPClient

    init(configuration: FetchConfiguration) {
        self.configuration = configuration
        var http = HTTPClient.Configuration(
            redirectConfiguration: configuration.maxRedirects > 0
                ? .follow(max: configuration.maxRedirects, allowCycles: false) : .disallow,
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.readTimeout)),
            decompression: .disabled)
        // Fail fast on a refused connection: the engine's retries (with backoff, counted) handle it.
        http.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Shuts the HTTP client down.
    func shutdown() async throws {
        try await client.shutdown()
    }

    /// One attempt at `url`. Throws `DownloadFailure`, or `ImagingError` of kind `.cancelled`.
    func download(_ url: String) async throws -> [UInt8] {
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
            throw DownloadFailure(error: ImagingError(.download, message), isTransient: transient)
        }
        let limit = configuration.maxBytes
        if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > limit {
            throw DownloadFailure(error: ImagingError(
                .limit,
                "\(url): the server announces \(ImageLimits.mebibytes(length)) MiB, over the limit of \(ImageLimits.mebibytes(limit)) MiB; "
                    + "raise it with --max-bytes or FetchConfiguration.maxBytes"), isTransient: false)
        }
        var data: [UInt8] = []
        do {
            for try await var chunk in response.body {
                if Task.isCancelled { throw ImagingError.cancelledError }
                if data.count + chunk.readableBytes > limit {
                    // Leaving the loop abandons the body: the connection is closed, not drained.
                    throw DownloadFailure(error: ImagingError(
                        .limit,
                        "\(url): the body is larger than the limit of \(ImageLimits.mebibytes(limit)) MiB; "
                            + "raise it with --max-bytes or FetchConfiguration.maxBytes"), isTransient: false)
                }
                if let bytes = chunk.readBytes(length: chunk.readableBytes) { data.append(contentsOf: bytes) }
            }
        } catch let failure as DownloadFailure {
            throw failure
        } catch {
            throw classify(error, url: url)
        }
        return data
    }

    private func classify(_ error: any Error, url: String) -> any Error {
        if Task.isCancelled { return ImagingError.cancelledError }
        if let imaging = error as? ImagingError {
            return imaging.kind == .cancelled ? imaging : DownloadFailure(error: imaging, isTransient: false)
        }
        if error is CancellationError { return ImagingError.cancelledError }
        if let http = error as? HTTPClientError {
            switch http {
            case .readTimeout:
                return DownloadFailure(error: ImagingError(.download, "\(url): the server sent nothing for \(configuration.readTimeout) (read timeout)"), isTransient: true)
            case .connectTimeout:
                return DownloadFailure(error: ImagingError(.download, "\(url): could not connect within \(configuration.connectTimeout) (connect timeout)"), isTransient: true)
            case .deadlineExceeded:
                return DownloadFailure(error: ImagingError(.download, "\(url): the download took longer than \(configuration.requestTimeout)"), isTransient: true)
            case .redirectLimitReached:
                return DownloadFailure(error: ImagingError(.download, "\(url): too many redirects (more than \(configuration.maxRedirects))"), isTransient: false)
            case .redirectCycleDetected:
                return DownloadFailure(error: ImagingError(.download, "\(url): the redirects loop back on themselves"), isTransient: false)
            case .invalidURL, .emptyHost, .emptyScheme:
                return DownloadFailure(error: ImagingError(.download, "\(url): invalid URL"), isTransient: false)
            case .cancelled:
                return ImagingError.cancelledError
            case .remoteConnectionClosed:
                return DownloadFailure(error: ImagingError(.download, "\(url): the server closed the connection"), isTransient: true)
            default:
                return DownloadFailure(error: ImagingError(.download, "\(url): \(http)"), isTransient: true)
            }
        }
        let text = String(describing: error)
        let refused = text.contains("refused") || text.contains("ECONNREFUSED") || text.contains("errno: 111")
        let message = refused ? "\(url): connection refused (is the server running?)" : "\(url): \(text)"
        return DownloadFailure(error: ImagingError(.download, message), isTransient: true)
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
