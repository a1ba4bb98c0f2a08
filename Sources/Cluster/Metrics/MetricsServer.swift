import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A small HTTP server that answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format), and 404 to anything else. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening.
/// NIO rather than a web framework: one route, one thread, and swift-nio is already a dependency.
public final class MetricsServer: Service, Sendable {
    /// The address actually bound (a port of 0 is resolved).
    public let host: String
    /// The port actually bound.
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Starts serving on `host:port` (port 0: any free port).
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    public static func start(host: String, port: Int, render: @escaping @Sendable () async -> String) async throws -> MetricsServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(MetricsHandler(render: render))
                    }
                }
                .bind(host: host, port: port).get()
            let bound = channel.localAddress?.port ?? port
            return MetricsServer(host: host, port: bound, group: group, channel: channel)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private init(host: String, port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.host = host
        self.port = port
        self.group = group
        self.channel = channel
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops listening and ends the server's thread.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Answers each request on its connection.
private final class MetricsHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let render: @Sendable () async -> String

    init(render: @escaping @Sendable () async -> String) { self.render = render }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let keepAlive = head.isKeepAlive
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard head.method == .GET || head.method == .HEAD, path == "/metrics" else {
            Self.respond(bound, status: .notFound, body: "not found: try GET /metrics\n", keepAlive: keepAlive, headOnly: false)
            return
        }
        let promise = context.eventLoop.makePromise(of: String.self)
        promise.completeWithTask { await self.render() }
        let headOnly = head.method == .HEAD
        promise.futureResult.whenSuccess { text in
            Self.respond(bound, status: .ok, body: text, keepAlive: keepAlive, headOnly: headOnly)
        }
    }

    private static func respond(_ bound: NIOLoopBound<ChannelHandlerContext>, status: HTTPResponseStatus, body: String,
                                keepAlive: Bool, headOnly: Bool) {
        let context = bound.value
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: status == .ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !headOnly {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
