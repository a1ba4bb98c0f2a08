import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A tiny HTTP server for a worker's probes (Kubernetes, load balancers), on one address:
///
/// - `GET /livez`: 200 when the worker answers at all (its actor is not stuck); the process is alive.
/// - `GET /readyz` (also `/healthz`): 200 when the worker is registered with its coordinator and neither
///   draining nor stopping, else 503; the body says which (``WorkerHealth/summary``).
///
/// Anything else is 404. A `Service`: in a `ServiceGroup` listed before the worker, it answers until the
/// worker has drained (readiness 503 meanwhile), then stops listening.
public final class WorkerHealthServer: Service, Sendable {
    /// The address actually bound.
    public let host: String
    /// The port actually bound (a port of 0 is resolved).
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Starts serving `health` on `host:port` (port 0: any free port).
    ///
    /// - Throws: NIO's error when the address cannot be bound.
    public static func start(host: String, port: Int, health: @escaping @Sendable () async -> WorkerHealth) async throws -> WorkerHealthServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(HealthHandler(health: health))
                    }
                }
                .bind(host: host, port: port).get()
            return WorkerHealthServer(host: host, port: channel.localAddress?.port ?? port, group: group, channel: channel)
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

/// Answers each probe on its connection.
private final class HealthHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let health: @Sendable () async -> WorkerHealth

    init(health: @escaping @Sendable () async -> WorkerHealth) { self.health = health }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let keepAlive = head.isKeepAlive
        let headOnly = head.method == .HEAD
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard head.method == .GET || headOnly, ["/livez", "/readyz", "/healthz"].contains(path) else {
            Self.respond(bound, .notFound, "not found: try GET /livez or /readyz\n", keepAlive: keepAlive, headOnly: headOnly)
            return
        }
        let promise = context.eventLoop.makePromise(of: WorkerHealth.self)
        promise.completeWithTask { await self.health() }
        promise.futureResult.whenSuccess { health in
            let ok = path == "/livez" || health.isReady
            Self.respond(bound, ok ? .ok : .serviceUnavailable, health.summary + "\n", keepAlive: keepAlive, headOnly: headOnly)
        }
    }

    private static func respond(_ bound: NIOLoopBound<ChannelHandlerContext>, _ status: HTTPResponseStatus, _ body: String,
                                keepAlive: Bool, headOnly: Bool) {
        let context = bound.value
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
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
