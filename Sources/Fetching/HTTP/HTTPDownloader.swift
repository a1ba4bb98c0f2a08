import CCurl
import Foundation
import Imaging

/// Downloads one URL per call through libcurl, on the fetcher's ``TransferLoop`` thread, and turns how
/// the transfer ended into the body or a ``DownloadFailure`` that names the URL and the cause and says
/// whether a retry may help. Never retries itself (the engine does, see ``FetchOperation``).
///
/// Keeps what a download needs: HTTPS (libcurl with OpenSSL, HTTP/2 where the server offers it), capped
/// redirects to `http` and `https` only, proxies from the usual environment variables (`http_proxy`,
/// `https_proxy`, `all_proxy`, `no_proxy`), connect, read and attempt timeouts, a minimum rate, and
/// the byte limit enforced while the body streams, and the configuration's ``SourcePolicy`` on the resolved
/// address of every connection (a refusal is permanent and names the address and the option that allows it).
/// Every URL in a message is masked (``SourceRedaction``).
final class HTTPDownloader: Sendable {
    private let configuration: FetchConfiguration
    private let loop: TransferLoop?

    init(configuration: FetchConfiguration) {
        self.configuration = configuration
        self.loop = TransferLoop()
    }

    deinit {
        loop?.requestShutdown()
    }

    /// Stops the transfer thread (running transfers fail) and waits for it.
    func shutdown() async {
        await loop?.shutdown()
    }

    /// One attempt at `url`, which must end by `deadline` (the download's total time limit) if given.
    /// Throws `DownloadFailure`, or `ImagingError` of kind `.cancelled`.
    func download(
        _ url: String, deadline: ContinuousClock.Instant?, signing: S3Credentials? = nil
    ) async throws -> [UInt8] {
        guard let loop else { throw Self.unavailable(url) }
        try checkLiteralHost(url)
        var timeout = configuration.requestTimeout
        var limitedByDeadline = false
        if let deadline, deadline - .now < timeout {
            timeout = deadline - .now
            limitedByDeadline = true
        }
        let request = TransferRequest(
            url: url, maxBytes: configuration.maxBytes, connectTimeout: configuration.connectTimeout, timeout: timeout,
            readTimeout: configuration.readTimeout, minimumRate: configuration.minimumRate,
            minimumRateWindow: configuration.minimumRateWindow, maxRedirects: configuration.maxRedirects)
        var signed = request
        signed.sourcePolicy = configuration.sourcePolicy
        signed.signing = signing
        let report = await loop.perform(signed)
        if report.stop == .cancelled || Task.isCancelled { throw ImagingError.cancelledError }
        if report.stop == nil, report.curlCode == CURLE_OK.rawValue, (200..<300).contains(report.status) {
            return report.body
        }
        throw failure(report, limitedByDeadline: limitedByDeadline)
    }

    /// One signed PUT of `bytes` to `url` (an S3 upload), without redirects or retries. Throws
    /// `DownloadFailure` (its message names the URL and the cause), or `ImagingError` of kind `.cancelled`.
    func upload(_ bytes: [UInt8], contentType: String, to url: String, signing: S3Credentials) async throws {
        guard let loop else { throw Self.unavailable(url) }
        try checkLiteralHost(url)
        var request = TransferRequest(
            url: url, maxBytes: 1 << 20, connectTimeout: configuration.connectTimeout,
            timeout: configuration.requestTimeout,
            readTimeout: configuration.requestTimeout, minimumRate: 0,
            minimumRateWindow: configuration.minimumRateWindow,
            maxRedirects: 0)
        request.upload = TransferRequest.Upload(bytes: bytes, contentType: contentType)
        request.signing = signing
        request.sourcePolicy = configuration.sourcePolicy
        let report = await loop.perform(request)
        if report.stop == .cancelled || Task.isCancelled { throw ImagingError.cancelledError }
        if report.stop == nil, report.curlCode == CURLE_OK.rawValue, (200..<300).contains(report.status) { return }
        throw failure(report, limitedByDeadline: false)
    }

    /// Refuses a URL whose host is a denied address in any spelling before libcurl is asked at all: the
    /// same decision the connection would get, but also when a proxy (the `*_proxy` variables) would make
    /// the connection instead. Host names and redirects are judged at each connection.
    private func checkLiteralHost(_ url: String) throws(DownloadFailure) {
        guard !configuration.sourcePolicy.allowsEverything, let host = URLHost.host(of: url),
            let refusal = configuration.sourcePolicy.decision(forHost: host)?.refusal
        else { return }
        throw DownloadFailure(
            error: ImagingError(.download, "\(SourceRedaction.redact(url)): refused: \(refusal.message)"),
            isTransient: false)
    }

    // MARK: - Why a transfer failed

    /// The failure of every transfer when there is no transfer loop: libcurl (loaded on first use) could not be
    /// loaded, and the loader's message names the library and the package to install; or it did not set up.
    private static func unavailable(_ url: String) -> DownloadFailure {
        let reason = shiftwork_curl_load_failure().map { String(cString: $0) } ?? "libcurl could not be initialised"
        return DownloadFailure(
            error: ImagingError(.download, "\(SourceRedaction.redact(url)): \(reason)"), isTransient: false)
    }

    private func failure(_ report: TransferReport, limitedByDeadline: Bool) -> DownloadFailure {
        // Messages reach logs, status and terminals: never the credentials a URL may carry.
        let url = SourceRedaction.redact(report.url)
        func fail(_ message: String, kind: ImagingError.Kind = .download, transient: Bool) -> DownloadFailure {
            DownloadFailure(error: ImagingError(kind, "\(url): \(message)"), isTransient: transient)
        }
        let detail = report.curlMessage.isEmpty ? "" : " (\(DisplayText.escaped(report.curlMessage)))"
        switch report.stop {
        case .announcedTooLarge(let length):
            return fail(
                "the server announces \(ImageLimits.mebibytes(length)) MiB, over the limit of "
                    + "\(ImageLimits.mebibytes(configuration.maxBytes)) MiB; \(Self.raiseMaxBytes)", kind: .limit,
                transient: false)
        case .bodyTooLarge:
            return fail(
                "the body is larger than the limit of \(ImageLimits.mebibytes(configuration.maxBytes)) MiB; "
                    + Self.raiseMaxBytes, kind: .limit, transient: false)
        case .silent:
            return fail("the server sent nothing for \(configuration.readTimeout) (read timeout)", transient: true)
        case .shutDown:
            return fail("the fetcher was shut down before the download finished", transient: false)
        case .setupFailed(let reason):
            return fail(reason, transient: false)
        case .cancelled, .unsuccessfulStatus, nil:
            break
        }
        if let refusal = report.refusal, report.curlCode == CURLE_COULDNT_CONNECT.rawValue {
            // Refused before any connection: permanent (the same address would be refused again). A redirect
            // names its target, masked; nothing of a response is shown.
            var message = "refused: "
            if let final = report.effectiveURL.map(SourceRedaction.redact), final != url {
                message = "redirected to \(DisplayText.escaped(final)), refused: "
            }
            return fail(message + refusal.message, transient: false)
        }
        if report.stop == .unsuccessfulStatus || report.curlCode == CURLE_OK.rawValue {
            var message = "HTTP \(HTTPStatus.describe(report.status))"
            // Compared masked: libcurl's effective URL may differ from the request's only in its credentials.
            if let final = report.effectiveURL.map(SourceRedaction.redact), final != url {
                message += " (redirected to \(DisplayText.escaped(final)))"
            }
            var failure = fail(message, transient: HTTPStatus.isTransient(report.status))
            if failure.isTransient { failure.retryAfter = report.retryAfter.flatMap { RetryAfter.parse($0) } }
            return failure
        }
        switch CURLcode(rawValue: report.curlCode) {
        case CURLE_OPERATION_TIMEDOUT:
            if report.curlMessage.hasPrefix("Operation too slow") {
                return fail(
                    "slower than the minimum rate of \(Self.rate(configuration.minimumRate)) for "
                        + "\(configuration.minimumRateWindow); lower it with --min-download-rate and --min-download-rate-window "
                        + "or FetchConfiguration.minimumRate", transient: true)
            }
            if report.curlMessage.hasPrefix("Connection timed out")
                || report.curlMessage.hasPrefix("Resolving timed out")
            {
                return fail(
                    "could not connect within \(configuration.connectTimeout) (connect timeout)", transient: true)
            }
            if limitedByDeadline {
                return fail(
                    "not downloaded within the total time limit of \(configuration.totalTimeLimit) "
                        + "(retries included); raise it with --download-time-limit or FetchConfiguration.totalTimeLimit",
                    transient: false)
            }
            return fail(
                "the download took longer than \(configuration.requestTimeout) (request timeout)", transient: true)
        case CURLE_COULDNT_CONNECT:
            if report.systemError == ECONNREFUSED {
                return fail("connection refused (is the server running?)", transient: true)
            }
            return fail("could not connect\(detail)", transient: true)
        case CURLE_COULDNT_RESOLVE_HOST:
            return fail("could not resolve the host name\(detail)", transient: true)
        case CURLE_COULDNT_RESOLVE_PROXY:
            return fail(
                "could not resolve the proxy's host name (check the *_proxy environment variables)\(detail)",
                transient: true)
        case CURLE_TOO_MANY_REDIRECTS:
            return fail("too many redirects (more than \(configuration.maxRedirects))", transient: false)
        case CURLE_UNSUPPORTED_PROTOCOL:
            if let location = report.location, let scheme = Self.scheme(of: location), scheme != "http",
                scheme != "https"
            {
                return fail(
                    "redirected to \(DisplayText.escaped(SourceRedaction.redact(location))), which is not an http or https URL: refused "
                        + "(only redirects to http and https are followed)", transient: false)
            }
            return fail("unsupported URL scheme (use http, https or file)", transient: false)
        case CURLE_URL_MALFORMAT:
            return fail("invalid URL\(detail)", transient: false)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return fail("the connection was closed or reset before the download finished\(detail)", transient: true)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR:
            return fail("the server's TLS certificate was not accepted\(detail)", transient: false)
        case CURLE_SSL_CONNECT_ERROR:
            return fail("the TLS handshake failed\(detail)", transient: true)
        default:
            let text = String(cString: shiftwork_curl_easy_strerror(CURLcode(rawValue: report.curlCode)))
            return fail(text.lowercased() + detail, transient: true)
        }
    }

    private static let raiseMaxBytes = "raise it with --max-bytes or FetchConfiguration.maxBytes"

    /// The scheme of an absolute URL ("file" for `file:///etc/passwd`), lowercased; `nil` for a relative one.
    private static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." })
        else { return nil }
        return scheme.lowercased()
    }

    /// "1 KiB/s", "2.5 KiB/s", "300 bytes/s".
    private static func rate(_ bytesPerSecond: Int) -> String {
        if bytesPerSecond < 1024 { return "\(bytesPerSecond) bytes/s" }
        let kib = Double(bytesPerSecond) / 1024
        return kib == kib.rounded() ? "\(Int(kib)) KiB/s" : String(format: "%.2f KiB/s", kib)
    }
}
