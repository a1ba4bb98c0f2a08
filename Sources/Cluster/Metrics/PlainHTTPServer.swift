import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A one-thread HTTP/1.1 server for small read-only endpoints (metrics, probes): each `GET` or `HEAD`
/// is answered with what `answer` returns for its path (query string removed); any other method gets 404.
/// NIO rather than a web framework: a few routes, and swift-nio is already a dependency.
final class PlainHTTPServer: Sendable {
    /// One response.
    struct Answer: Sendable {
        var status: HTTPResponseStatus
        var contentType: String
        var body: String
    }

    /// The address actually bound.
    let host: String
    /// The port actually bound (a port of 0 is resolved).
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// The event loop of the server's thread, for work that belongs with it (a repeated sample).
    var eventLoop: any EventLoop { group.next() }

    /// Starts serving on `host:port` (port 0: any free port).
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    static func start(host: String, port: Int, notFound: String,
                      answer: @escaping @Sendable (String) async -> Answer) async throws -> PlainHTTPServer {
        try await start(host: host, port: port) { AnsweringHandler(notFound: notFound, answer: answer) }
    }

    /// Starts serving on `host:port` (port 0: any free port), each connection's requests handled by a
    /// handler from `makeHandler` behind NIO's HTTP/1.1 server pipeline.
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    static func start(host: String, port: Int,
                      makeHandler: @escaping @Sendable () -> any ChannelHandler) async throws -> PlainHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                .bind(host: host, port: port).get()
            return PlainHTTPServer(host: host, port: channel.localAddress?.port ?? port, group: group, channel: channel)
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

    /// Stops listening and ends the server's thread.
    func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    /// The `run()` of a `Service` built on this server: waits for the group's graceful shutdown (or
    /// cancellation), then calls the service's `shutdown`, which stops this server.
    static func serveUntilGracefulShutdown(then shutdown: () async -> Void) async {
        try? await gracefulShutdown()
        await shutdown()
    }
}

/// Answers each request on its connection.
private final class AnsweringHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let notFound: String
    private let answer: @Sendable (String) async -> PlainHTTPServer.Answer

    init(notFound: String, answer: @escaping @Sendable (String) async -> PlainHTTPServer.Answer) {
        self.notFound = notFound
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let keepAlive = head.isKeepAlive
        let headOnly = head.method == .HEAD
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard head.method == .GET || headOnly else {
            Self.respond(bound, PlainHTTPServer.Answer(status: .notFound, contentType: "text/plain", body: notFound),
                         keepAlive: keepAlive, headOnly: false)
            return
        }
        let promise = context.eventLoop.makePromise(of: PlainHTTPServer.Answer.self)
        promise.completeWithTask { await self.answer(path) }
        promise.futureResult.whenSuccess { answer in
            Self.respond(bound, answer, keepAlive: keepAlive, headOnly: headOnly)
        }
    }

    private static func respond(_ bound: NIOLoopBound<ChannelHandlerContext>, _ answer: PlainHTTPServer.Answer,
                                keepAlive: Bool, headOnly: Bool) {
        let context = bound.value
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: answer.contentType)
        headers.add(name: "Content-Length", value: String(answer.body.utf8.count))
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers))),
                      promise: nil)
        if !headOnly {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(string: answer.body)))), promise: nil)
        }
        let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
