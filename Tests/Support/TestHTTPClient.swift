import NIOCore
import NIOHTTP1
import NIOPosix

/// A minimal HTTP/1.1 client for tests that read a plain-text endpoint (the coordinator's `/metrics`):
/// one `GET` on a new connection, `Connection: close`, the whole response collected. Only `http://`
/// URLs with an IP address or host name and a port.
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

    /// Sends `GET url` (with `headers`, which may replace `Host`) and returns the response; fails after `timeout`.
    public static func get(_ url: String, headers extra: [(String, String)] = [], timeout: TimeAmount = .seconds(10)) async throws -> Response {
        guard url.hasPrefix("http://") else { throw InvalidURL(url: url) }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else {
            throw InvalidURL(url: url)
        }
        let host = String(authority[..<colon])
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: Response.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            // Nothing listens (yet): complete the promise, which NIO requires of every promise it drops.
            promise.fail(error)
            throw error
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: String(authority))
        headers.add(name: "Connection", value: "close")
        for (name, value) in extra {
            headers.replaceOrAdd(name: name, value: value)
        }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path.isEmpty ? "/" : String(path), headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(ChannelError.connectTimeout(timeout))
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        let response = try await promise.futureResult.get()
        try? await channel.close().get()
        return response
    }
}

/// Collects one response and completes the promise with it (or fails it if the connection ends first).
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<TestHTTPClient.Response>
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<TestHTTPClient.Response>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var buffer):
            body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end:
            guard let head else { return }
            promise.succeed(TestHTTPClient.Response(
                status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) }, body: body))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
