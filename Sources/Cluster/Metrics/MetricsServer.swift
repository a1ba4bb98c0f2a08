import HTTPEndpoints
import ServiceLifecycle

/// The coordinator's HTTP server: answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format) and, given a `Dashboard`, serves the dashboard beside it (`DashboardHTTPHandler`); anything
/// else is 404. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening.
/// On `HTTPEndpointServer` (libmicrohttpd, a thread per connection).
public final class MetricsServer: Service, Sendable {
    /// The address actually bound.
    public var host: String { server.host }
    /// The port actually bound (a port of 0 is resolved).
    public var port: Int { server.port }
    private let server: HTTPEndpointServer
    /// The dashboard served beside `/metrics`, if any.
    public let dashboard: Dashboard?
    /// Samples the dashboard's throughput history.
    private let sampling: Task<Void, Never>?

    /// Starts serving on `host:port` (port 0: any free port); with `dashboard`, the dashboard too.
    ///
    /// - Throws: `HTTPEndpointError` when the address cannot be bound (in use, not local).
    public static func start(host: String, port: Int, dashboard: Dashboard? = nil,
                             render: @escaping @Sendable () async -> String) async throws -> MetricsServer {
        let handler = DashboardHTTPHandler(renderMetrics: render, dashboard: dashboard)
        let server = try HTTPEndpointServer.start(host: host, port: port) { request, _ in handler.answer(request) }
        // The sample itself is an append to a ring; the status is made on the coordinator's executor.
        let sampling = dashboard.map { dashboard in
            Task {
                while !Task.isCancelled {
                    dashboard.sample(await dashboard.source.dashboardStatus(batchID: ""))
                    try? await Task.sleep(for: .seconds(Dashboard.sampleIntervalSeconds))
                }
            }
        }
        return MetricsServer(server: server, dashboard: dashboard, sampling: sampling)
    }

    private init(server: HTTPEndpointServer, dashboard: Dashboard?, sampling: Task<Void, Never>?) {
        self.dashboard = dashboard
        self.sampling = sampling
        self.server = server
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops listening, closes the connections (event streams end) and ends the server's threads.
    public func shutdown() async {
        sampling?.cancel()
        await server.shutdown()
        dashboard?.shutdown()
    }
}
