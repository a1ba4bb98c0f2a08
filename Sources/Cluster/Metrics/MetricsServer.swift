import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The coordinator's HTTP server: answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format) and, given a `Dashboard`, serves the dashboard beside it (`DashboardHTTPHandler`); anything
/// else is 404. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening.
/// NIO rather than a web framework: a few routes, one thread, and swift-nio is already a dependency.
public final class MetricsServer: Service, Sendable {
    /// The address actually bound (a port of 0 is resolved).
    public let host: String
    /// The port actually bound.
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The dashboard served beside `/metrics`, if any.
    public let dashboard: Dashboard?
    /// Samples the dashboard's throughput history.
    private let sampling: RepeatedTask?

    /// Starts serving on `host:port` (port 0: any free port); with `dashboard`, the dashboard too.
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    public static func start(host: String, port: Int, dashboard: Dashboard? = nil,
                             render: @escaping @Sendable () async -> String) async throws -> MetricsServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(DashboardHTTPHandler(renderMetrics: render, dashboard: dashboard))
                    }
                }
                .bind(host: host, port: port).get()
            let bound = channel.localAddress?.port ?? port
            let sampling = dashboard.map { dashboard in
                let loop = group.next()
                return loop.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: .seconds(Dashboard.sampleIntervalSeconds)) { _ in
                    let promise = loop.makePromise(of: Void.self)
                    promise.completeWithTask { dashboard.sample(await dashboard.source.dashboardStatus(batchID: "")) }
                    return promise.futureResult
                }
            }
            return MetricsServer(host: host, port: bound, group: group, channel: channel, dashboard: dashboard, sampling: sampling)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private init(host: String, port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, dashboard: Dashboard?,
                 sampling: RepeatedTask?) {
        self.dashboard = dashboard
        self.sampling = sampling
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
        sampling?.cancel()
        try? await channel.close()
        try? await group.shutdownGracefully()
        dashboard?.shutdown()
    }
}
