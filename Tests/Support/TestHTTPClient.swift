import CCurl
import Foundation

/// A minimal HTTP/1.1 client for tests that read a plain-text endpoint (the coordinator's `/metrics`,
/// the dashboard, a worker's probes): one `GET` on a new connection, `Connection: close`, the whole
/// response collected, redirects not followed, no proxy. Only `http://` URLs. On libcurl, on a thread
/// of its own (the transfer blocks it, never the cooperative pool).
public enum TestHTTPClient {
    /// A response: status, headers and body.
    public struct Response: Sendable {
        /// The status code, e.g. 200.
        public let status: Int
        /// The headers, in order.
        public let headers: [(name: String, value: String)]
        /// The body.
        public let body: [UInt8]
        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The value of the first header named `name` (any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// The URL could not be parsed.
    public struct InvalidURL: Error, CustomStringConvertible {
        public let url: String
        public var description: String { "not an http://HOST:PORT/PATH URL: \(url)" }
    }

    /// The request failed (nothing listens, the connection dropped, the time ran out).
    public struct Failure: Error, CustomStringConvertible {
        public let url: String
        public let reason: String
        public var description: String { "GET \(url) failed: \(reason)" }
    }

    /// Sends `GET url` (with `headers`, which may replace `Host`) and returns the response; fails after `timeout`.
    public static func get(
        _ url: String, headers extra: [(String, String)] = [], timeout: Duration = .seconds(10)
    ) async throws -> Response {
        guard url.hasPrefix("http://") else { throw InvalidURL(url: url) }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try perform(url, headers: extra, timeout: timeout) })
            }
        }
    }

    private static let globalSetUp: Bool = shiftwork_curl_global_init() == CURLE_OK

    /// One blocking transfer.
    private static func perform(_ url: String, headers extra: [(String, String)], timeout: Duration) throws -> Response
    {
        guard globalSetUp, let handle = shiftwork_curl_easy_init() else {
            throw Failure(url: url, reason: "libcurl did not start")
        }
        defer { shiftwork_curl_easy_cleanup(handle) }
        var lines: UnsafeMutablePointer<curl_slist>? = shiftwork_curl_slist_append(nil, "Connection: close")
        for (name, value) in extra { lines = shiftwork_curl_slist_append(lines, "\(name): \(value)") }
        defer { shiftwork_curl_slist_free_all(lines) }
        let collected = Unmanaged.passRetained(Collected())
        defer { collected.release() }
        let (seconds, attoseconds) = timeout.components
        _ = shiftwork_curl_set_string(handle, CURLOPT_URL, url)
        _ = shiftwork_curl_set_string(handle, CURLOPT_PROXY, "")
        _ = shiftwork_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = shiftwork_curl_set_long(
            handle, CURLOPT_TIMEOUT_MS, max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)))
        _ = shiftwork_curl_set_pointer(handle, CURLOPT_HTTPHEADER, lines)
        _ = shiftwork_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, collectHeader)
        _ = shiftwork_curl_set_pointer(handle, CURLOPT_HEADERDATA, collected.toOpaque())
        _ = shiftwork_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, collectBody)
        _ = shiftwork_curl_set_pointer(handle, CURLOPT_WRITEDATA, collected.toOpaque())
        let result = shiftwork_curl_easy_perform(handle)
        guard result == CURLE_OK else {
            throw Failure(url: url, reason: String(cString: shiftwork_curl_easy_strerror(result)))
        }
        var status = 0
        _ = shiftwork_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let response = collected.takeUnretainedValue()
        return Response(status: status, headers: response.headers, body: response.body)
    }
}

/// What one transfer received.
private final class Collected {
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
}

private let collectHeader: curl_write_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: size * count), as: UTF8.self)
    let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
    if line.hasPrefix("HTTP/") {
        collected.headers = []  // a new response head (after a 100 Continue)
    } else if let colon = line.firstIndex(of: ":") {
        collected.headers.append(
            (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)))
    }
    return size * count
}

private let collectBody: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
    collected.body.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: size * count))
    return size * count
}
