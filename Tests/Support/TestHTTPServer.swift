import HTTPEndpoints
import Runtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real HTTP/1.1 server on 127.0.0.1 (or another local address; an ephemeral port) for tests: serves
/// registered routes and directories of files, and simulates the failures a downloader must survive (404, 5xx, redirects,
/// slow, streamed or stalled bodies, dropped connections). It also serves as an HTTP proxy: a route whose path is an
/// absolute URL answers the proxied request for that URL.
///
/// Thread-safe: routes can be registered while requests are served; connections are concurrent (a
/// thread each) and keep-alive is honoured (or not, as the client asks). On `HTTPEndpointServer`
/// (libmicrohttpd), the server of the product's own endpoints: a blocked connection thread is how a
/// stalled or slow answer is made.
///
/// ```swift
/// let server = try TestHTTPServer()
/// defer { server.shutdown() }
/// server.serve(path: "/a.jpg", body: bytes, contentType: "image/jpeg")
/// let url = server.baseURL + "/a.jpg"
/// ```
public final class TestHTTPServer: Sendable {
    /// What the server answers on a path.
    public indirect enum Response: Sendable {
        /// A complete response.
        case content(status: HTTPResponseStatus, contentType: String, body: [UInt8])
        /// A complete response with the given headers (Content-Length is added).
        case answer(status: HTTPResponseStatus, headers: [(name: String, value: String)], body: [UInt8])
        /// A redirect (302 by default) to `location` (absolute URL or path).
        case redirect(location: String, status: HTTPResponseStatus)
        /// Sends the head after `initialDelay`, then the body in chunks of `chunkSize` bytes every `interval`.
        case slow(contentType: String, body: [UInt8], chunkSize: Int, interval: Duration, initialDelay: Duration)
        /// Like `slow`, but without a Content-Length: the body is sent chunked, its size unknown until it ends.
        case streamed(contentType: String, body: [UInt8], chunkSize: Int, interval: Duration)
        /// Accepts the request and never answers (until the server shuts down).
        case stall
        /// Closes the connection without answering.
        case drop
        /// Answers with `failures` once each (in order) before answering with `then` forever.
        case sequence([Response], then: Response)
    }

    private let server: HTTPEndpointServer
    private let state: InlineLock<State>

    private struct State {
        var routes: [String: Response] = [:]
        var directories: [(prefix: String, path: String)] = []
        var counts: [String: Int] = [:]
    }

    /// The port the server listens on.
    public let port: Int
    /// The address the server listens on.
    public let host: String

    /// `http://HOST:PORT` (no trailing slash).
    public var baseURL: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// The absolute URL of `path` (which starts with "/").
    public func url(_ path: String) -> String { baseURL + path }

    /// Limits of a test server: many connections (stalled downloads hold theirs), never an idle timeout
    /// (a stall lasts until the test ends).
    private static let limits = HTTPEndpointServer.Limits(
        connections: 1000, idleTimeoutSeconds: 0, requestHeadBytes: 64 * 1024)

    /// Starts the server on `host` (an IPv4 address of this machine, 127.0.0.1 by default) with an
    /// ephemeral port.
    public init(host: String = "127.0.0.1") throws {
        let state = InlineLock(State())
        let box = StateBox()
        server = try HTTPEndpointServer.start(host: host, port: 0, limits: Self.limits) { request, stop in
            let response = box.value?.resolve(path: request.target) ?? .drop
            return Self.reply(response, stop: stop)
        }
        self.state = state
        self.host = host
        port = server.port
        box.set(self)
    }

    // MARK: Routes

    /// Serves `body` on `path` (exact match, query ignored).
    public func serve(
        path: String, body: [UInt8], contentType: String = "application/octet-stream", status: HTTPResponseStatus = .ok
    ) {
        set(path, .content(status: status, contentType: contentType, body: body))
    }

    /// Serves `response` on `path`.
    public func serve(path: String, response: Response) {
        set(path, response)
    }

    /// Redirects `path` to `location` (an absolute URL, or a path on this server).
    public func redirect(path: String, to location: String, status: HTTPResponseStatus = .found) {
        set(path, .redirect(location: location, status: status))
    }

    /// Serves `body` slowly: the head after `initialDelay`, then `chunkSize` bytes every `interval`.
    public func serveSlowly(
        path: String, body: [UInt8], contentType: String = "application/octet-stream",
        chunkSize: Int = 1024, interval: Duration = .milliseconds(100), initialDelay: Duration = .zero
    ) {
        set(
            path,
            .slow(
                contentType: contentType, body: body, chunkSize: max(1, chunkSize), interval: interval,
                initialDelay: initialDelay))
    }

    /// Serves `body` chunked, without announcing its size: `chunkSize` bytes every `interval`.
    public func serveStreamed(
        path: String, body: [UInt8], contentType: String = "application/octet-stream",
        chunkSize: Int = 1024, interval: Duration = .milliseconds(10)
    ) {
        set(path, .streamed(contentType: contentType, body: body, chunkSize: max(1, chunkSize), interval: interval))
    }

    /// Answers `status` (503 by default) `failures` times, then serves `body`.
    public func serveAfterFailures(
        path: String, failures: Int, status: HTTPResponseStatus = .serviceUnavailable,
        body: [UInt8], contentType: String = "application/octet-stream"
    ) {
        let failure = Response.content(
            status: status, contentType: "text/plain", body: Array("\(status.code) \(status.reasonPhrase)\n".utf8))
        set(
            path,
            .sequence(
                Array(repeating: failure, count: failures),
                then: .content(status: .ok, contentType: contentType, body: body)))
    }

    /// Serves the files under the local directory `directory` at URL paths starting with `prefix`
    /// (e.g. "/files/"): `prefix + "a/b.jpg"` reads `directory/a/b.jpg`. The content type follows the
    /// extension (jpg, png, html, txt; else application/octet-stream).
    public func serveDirectory(_ directory: String, at prefix: String = "/files/") {
        let prefix = prefix.hasSuffix("/") ? prefix : prefix + "/"
        state.withLock { $0.directories.append((prefix, directory)) }
    }

    /// Removes the route on `path`.
    public func remove(path: String) {
        _ = state.withLock { $0.routes.removeValue(forKey: path) }
    }

    /// How many requests arrived for `path` (whatever the answer).
    public func requestCount(path: String) -> Int {
        state.withLock { $0.counts[path, default: 0] }
    }

    /// Stops listening, ends stalled and slow answers, closes the connections and ends their threads.
    /// Blocks until done; idempotent.
    public func shutdown() {
        server.shutdownBlocking()
    }

    deinit {
        shutdown()
    }

    private func set(_ path: String, _ response: Response) {
        state.withLock { $0.routes[path] = response }
    }

    /// Looks up the answer to a request on `path` (and counts the request).
    fileprivate func resolve(path rawPath: String) -> Response {
        let path = String(rawPath.prefix { $0 != "?" })
        return state.withLock { state -> Response in
            state.counts[path, default: 0] += 1
            if let response = state.routes[path] {
                if case .sequence(var steps, let then) = response {
                    guard !steps.isEmpty else { return then }
                    let next = steps.removeFirst()
                    state.routes[path] = .sequence(steps, then: then)
                    return next
                }
                return response
            }
            for (prefix, directory) in state.directories where path.hasPrefix(prefix) {
                let relative = String(path.dropFirst(prefix.count))
                if relative.split(separator: "/").contains("..") || relative.isEmpty { continue }
                if let body = Self.readFile(directory + "/" + relative) {
                    return .content(status: .ok, contentType: Self.contentType(of: relative), body: body)
                }
            }
            return .content(status: .notFound, contentType: "text/plain", body: Array("not found: \(path)\n".utf8))
        }
    }

    private static func contentType(of name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "html", "htm": return "text/html"
        case "txt": return "text/plain"
        default: return "application/octet-stream"
        }
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if count < chunk.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }
}

/// Lets the request handler find the server once it is initialised (a weak reference: the handler
/// must not keep a shut-down server alive).
private final class StateBox: Sendable {
    private let server = InlineLock(WeakServer())
    private struct WeakServer { weak var value: TestHTTPServer? }
    func set(_ server: TestHTTPServer) { self.server.withLock { $0.value = server } }
    var value: TestHTTPServer? { server.withLock { $0.value } }
}

extension TestHTTPServer {
    /// The reply that makes `response`, on the connection's thread (which `.slow` and `.stall` block).
    fileprivate static func reply(_ response: Response, stop: StopSignal) -> HTTPEndpointReply {
        switch response {
        case .content(let status, let contentType, let body):
            return .complete(status: status.code, headers: [("Content-Type", contentType)], body: body)
        case .answer(let status, let headers, let body):
            return .complete(status: status.code, headers: headers, body: body)
        case .redirect(let location, let status):
            return .complete(
                status: status.code, headers: [("Location", location), ("Content-Type", "text/plain")],
                body: Array("redirect\n".utf8))
        case .slow(let contentType, let body, let chunkSize, let interval, let initialDelay):
            guard stop.wait(seconds: initialDelay.inSeconds) else { return .drop }
            return .stream(
                status: 200, headers: [("Content-Type", contentType), ("Connection", "close")], size: body.count,
                body: ChunkedBody(body: body, chunkSize: chunkSize, interval: interval))
        case .streamed(let contentType, let body, let chunkSize, let interval):
            return .stream(
                status: 200, headers: [("Content-Type", contentType), ("Connection", "close")], size: nil,
                body: ChunkedBody(body: body, chunkSize: chunkSize, interval: interval))
        case .stall:
            stop.wait(seconds: nil)
            return .drop
        case .drop:
            return .drop
        case .sequence(_, let then):
            // resolve() unrolls sequences; this is only reached for an exhausted one.
            return reply(then, stop: stop)
        }
    }
}
