import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The coordinator's HTTP server: answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format) and, given a `Dashboard`, serves the dashboard beside it (`DashboardHTTPHandler`); anything
/// else is 404. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening.
/// On `PlainHTTPServer` (SwiftNIO, one thread).
public final class MetricsServer: Service, Sendable {
    /// The address actually bound.
    public var host: String { server.host }
    /// The port actually bound (a port of 0 is resolved).
    public var port: Int { server.port }
    private let server: PlainHTTPServer
    /// The dashboard served beside `/metrics`, if any.
    public let dashboard: Dashboard?
    /// Samples the dashboard's throughput history.
    private let sampling: RepeatedTask?

    /// Starts serving on `host:port` (port 0: any free port); with `dashboard`, the dashboard too.
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    public static func start(host: String, port: Int, dashboard: Dashboard? = nil,
                             render: @escaping @Sendable () async -> String) async throws -> MetricsServer {
        let server = try await PlainHTTPServer.start(host: host, port: port) {
            DashboardHTTPHandler(renderMetrics: render, dashboard: dashboard)
        }
        let sampling = dashboard.map { dashboard in
            let loop = server.eventLoop
            return loop.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: .seconds(Dashboard.sampleIntervalSeconds)) { _ in
                let promise = loop.makePromise(of: Void.self)
                promise.completeWithTask { dashboard.sample(await dashboard.source.dashboardStatus(batchID: "")) }
                return promise.futureResult
            }
        }
        return MetricsServer(server: server, dashboard: dashboard, sampling: sampling)
    }

    private init(server: PlainHTTPServer, dashboard: Dashboard?, sampling: RepeatedTask?) {
        self.dashboard = dashboard
        self.sampling = sampling
        self.server = server
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        await PlainHTTPServer.serveUntilGracefulShutdown(then: shutdown)
    }

    /// Stops listening and ends the server's thread.
    public func shutdown() async {
        sampling?.cancel()
        await server.shutdown()
        dashboard?.shutdown()
    }
}
