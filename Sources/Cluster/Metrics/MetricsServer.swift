import HTTPEndpoints
import ServiceLifecycle

/// The coordinator's HTTP server: answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format) and, given a `Dashboard`, serves the dashboard beside it (`DashboardHTTPHandler`); anything
/// else is 404. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening;
/// while it runs, a child task samples the dashboard's throughput history.
/// On `HTTPEndpointServer` (libmicrohttpd, a thread per connection).
public final class MetricsServer: Service, Sendable {
    /// The address actually bound.
    public var host: String { server.host }
    /// The port actually bound (a port of 0 is resolved).
    public var port: Int { server.port }
    private let server: HTTPEndpointServer
    /// The dashboard served beside `/metrics`, if any.
    public let dashboard: Dashboard?

    /// Starts serving on `host:port` (port 0: any free port); with `dashboard`, the dashboard too.
    ///
    /// - Throws: `HTTPEndpointError` when the address cannot be bound (in use, not local).
    public static func start(
        host: String, port: Int, dashboard: Dashboard? = nil,
        render: @escaping @Sendable () async -> String
    ) async throws -> MetricsServer {
        let handler = DashboardHTTPHandler(renderMetrics: render, dashboard: dashboard)
        let server = try HTTPEndpointServer.start(host: host, port: port) { request, _ in handler.answer(request) }
        return MetricsServer(server: server, dashboard: dashboard)
    }

    private init(server: HTTPEndpointServer, dashboard: Dashboard?) {
        self.dashboard = dashboard
        self.server = server
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            if let dashboard {
                group.addTask { await Self.sample(dashboard) }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await shutdown()
    }

    /// Samples the dashboard's throughput history every `Dashboard.sampleIntervalSeconds` until cancelled.
    /// The sample itself is an append to a ring; the status is made on the coordinator's executor.
    private static func sample(_ dashboard: Dashboard) async {
        while !Task.isCancelled {
            dashboard.sample(await dashboard.source.dashboardStatus(batchID: ""))
            try? await Task.sleep(for: .seconds(Dashboard.sampleIntervalSeconds))
        }
    }

    /// Stops listening, closes the connections (event streams end) and ends the server's threads.
    public func shutdown() async {
        await server.shutdown()
        dashboard?.shutdown()
    }
}
