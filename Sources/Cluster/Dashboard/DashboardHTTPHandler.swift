import HTTPEndpoints

/// Answers the requests of the coordinator's HTTP server: `/metrics` as ever, and, with a `Dashboard`,
/// its pages, JSON and event streams (without one, every other path is 404).
///
/// Runs on the connection's thread of `HTTPEndpointServer`: responses are rendered there, the coordinator
/// is asked in a task that only awaits it (`blockingAwait`), and previews are made on their own thread.
struct DashboardHTTPHandler: Sendable {
    let renderMetrics: @Sendable () async -> String
    let dashboard: Dashboard?

    /// The reply to `request`.
    func answer(_ request: HTTPEndpointRequest) -> HTTPEndpointReply {
        let dashboardRequest = DashboardRequest(
            method: request.method, uri: request.target, host: request.header("Host"),
            authorization: request.header("Authorization"), cookieHeaders: request.headers(named: "Cookie"))
        let isGetOrHead = request.method == "GET" || request.method == "HEAD"
        guard let dashboard else {
            // Only metrics, as before the dashboard.
            if dashboardRequest.pathSegments == ["metrics"], isGetOrHead {
                return metrics()
            }
            return .complete(
                status: 404, headers: [("Content-Type", "text/plain")],
                body: Array("not found: try GET /metrics\n".utf8))
        }
        switch dashboard.route(dashboardRequest) {
        case .metrics:
            return metrics()
        case .respond(let response):
            return Self.reply(response)
        case .page(let batchID):
            let status = blockingAwait { await dashboard.source.dashboardStatus(batchID: batchID ?? "") }
            return Self.reply(dashboard.page(batchID: batchID, status: status))
        case .statusJSON:
            let status = blockingAwait { await dashboard.source.dashboardStatus(batchID: "") }
            return Self.reply(dashboard.statusJSON(batchID: nil, status: status))
        case .batchJSON(let batchID):
            let status = blockingAwait { await dashboard.source.dashboardStatus(batchID: batchID) }
            return Self.reply(dashboard.statusJSON(batchID: batchID, status: status))
        case .preview(let batchID, let itemIndex):
            return Self.reply(blockingAwait { await dashboard.preview(batchID: batchID, itemIndex: itemIndex) })
        case .events(let batchID):
            return events(dashboard: dashboard, batchID: batchID, headOnly: request.method == "HEAD")
        }
    }

    private func metrics() -> HTTPEndpointReply {
        let text = blockingAwait(renderMetrics)
        return .complete(
            status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Array(text.utf8)
        )
    }

    /// Server-sent events: a status a second until the client goes (`DashboardEventStream`).
    private func events(dashboard: Dashboard, batchID: String?, headOnly: Bool) -> HTTPEndpointReply {
        guard !headOnly else {
            return Self.reply(DashboardResponse(status: 200, contentType: "text/event-stream", body: []))
        }
        guard dashboard.openStream() else {
            return Self.reply(
                .jsonError(status: 503, "too many event streams open (\(Dashboard.maxEventStreams)); try again later"))
        }
        var head = DashboardResponse(status: 200, contentType: "text/event-stream; charset=utf-8", body: [])
        head.headers.append(.init("X-Accel-Buffering", "no"))
        return .stream(
            status: head.status, headers: head.headers.map { ($0.name, $0.value) }, size: nil,
            body: DashboardEventStream(dashboard: dashboard, batchID: batchID))
    }

    private static func reply(_ response: DashboardResponse) -> HTTPEndpointReply {
        .complete(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
    }
}
