import NIOCore
import NIOHTTP1

/// Answers the requests of one connection to the coordinator's HTTP server: `/metrics` as ever, and,
/// with a `Dashboard`, its pages, JSON and event streams (without one, every other path is 404).
///
/// Runs on the server's event loop thread: responses are rendered there, the coordinator is asked in a
/// task that only awaits it, and previews are made on their own thread.
final class DashboardHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let renderMetrics: @Sendable () async -> String
    private let dashboard: Dashboard?
    /// The event stream this connection serves, if any.
    private var eventTask: RepeatedTask?

    init(renderMetrics: @escaping @Sendable () async -> String, dashboard: Dashboard?) {
        self.renderMetrics = renderMetrics
        self.dashboard = dashboard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let request = DashboardRequest(
            method: head.method.rawValue, uri: head.uri, host: head.headers.first(name: "Host"),
            authorization: head.headers.first(name: "Authorization"), cookieHeaders: head.headers["Cookie"])
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let reply = Reply(bound: bound, keepAlive: head.isKeepAlive, headOnly: head.method == .HEAD)
        guard let dashboard else {
            // Only metrics, as before the dashboard.
            if request.pathSegments == ["metrics"], head.method == .GET || head.method == .HEAD {
                serveMetrics(reply, context: context)
            } else {
                reply.send(status: 404, headers: [("Content-Type", "text/plain")], body: Array("not found: try GET /metrics\n".utf8))
            }
            return
        }
        switch dashboard.route(request) {
        case .metrics:
            serveMetrics(reply, context: context)
        case .respond(let response):
            reply.send(response)
        case .page(let batchID):
            after(context, { await dashboard.source.dashboardStatus(batchID: batchID ?? "") }) { status in
                reply.send(dashboard.page(batchID: batchID, status: status))
            }
        case .statusJSON:
            after(context, { await dashboard.source.dashboardStatus(batchID: "") }) { status in
                reply.send(dashboard.statusJSON(batchID: nil, status: status))
            }
        case .batchJSON(let batchID):
            after(context, { await dashboard.source.dashboardStatus(batchID: batchID) }) { status in
                reply.send(dashboard.statusJSON(batchID: batchID, status: status))
            }
        case .preview(let batchID, let itemIndex):
            after(context, { await dashboard.preview(batchID: batchID, itemIndex: itemIndex) }) { response in
                reply.send(response)
            }
        case .events(let batchID):
            startEvents(context: context, reply: reply, dashboard: dashboard, batchID: batchID)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let eventTask {
            eventTask.cancel()
            self.eventTask = nil
            dashboard?.closeStream()
        }
        context.fireChannelInactive()
    }

    private func serveMetrics(_ reply: Reply, context: ChannelHandlerContext) {
        after(context, renderMetrics) { text in
            reply.send(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Array(text.utf8))
        }
    }

    /// Runs `fetch` (which awaits the coordinator or a preview thread), then `then` on the event loop.
    private func after<Value: Sendable>(_ context: ChannelHandlerContext, _ fetch: @escaping @Sendable () async -> Value,
                                        then: @escaping @Sendable (Value) -> Void) {
        let promise = context.eventLoop.makePromise(of: Value.self)
        promise.completeWithTask { await fetch() }
        promise.futureResult.whenSuccess(then)
    }

    /// Serves server-sent events: a status a second until the client goes (of a batch's items, those that
    /// changed since the last event). A browser's `EventSource`
    /// reconnects by itself after a coordinator restart (`retry:` says how soon).
    private func startEvents(context: ChannelHandlerContext, reply: Reply, dashboard: Dashboard, batchID: String?) {
        guard !reply.headOnly else {
            return reply.send(DashboardResponse(status: 200, contentType: "text/event-stream", body: []))
        }
        guard dashboard.openStream() else {
            return reply.send(.jsonError(status: 503, "too many event streams open (\(Dashboard.maxEventStreams)); try again later"))
        }
        var head = DashboardResponse(status: 200, contentType: "text/event-stream; charset=utf-8", body: [])
        head.headers.append(.init("X-Accel-Buffering", "no"))
        var headers = HTTPHeaders(head.headers.map { ($0.name, $0.value) })
        headers.add(name: "Connection", value: "keep-alive")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "retry: 1000\n\n")))), promise: nil)
        let bound = reply.bound
        let loop = context.eventLoop
        // Each event carries only the batch's items that changed since this stream's last one.
        let items = NIOLoopBoundBox(ItemChangeTracker(), eventLoop: loop)
        eventTask = loop.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: .seconds(Dashboard.eventIntervalSeconds)) { _ in
            let promise = loop.makePromise(of: DashboardStatus.self)
            promise.completeWithTask { await dashboard.source.dashboardStatus(batchID: batchID ?? "") }
            return promise.futureResult.map { status in
                let context = bound.value
                let text = dashboard.event(batchID: batchID, status: status, items: &items.value)
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(string: text)))),
                                      promise: nil)
            }
        }
    }
}

/// Writes one whole response on a connection, from the event loop.
private struct Reply: Sendable {
    let bound: NIOLoopBound<ChannelHandlerContext>
    let keepAlive: Bool
    let headOnly: Bool

    func send(_ response: DashboardResponse) {
        send(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
    }

    func send(status: Int, headers extra: [(String, String)], body: [UInt8]) {
        let context = bound.value
        var headers = HTTPHeaders(extra)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        if !headOnly {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
