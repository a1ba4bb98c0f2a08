import ServiceLifecycle

/// A small HTTP server that answers `GET /metrics` with the page `render` returns (Prometheus' text
/// format), and 404 to anything else. Binds one address; `shutdown()` stops it.
///
/// A `Service`: in a `ServiceGroup`, `run()` serves until the group shuts down, then stops listening.
/// One route on one thread (`PlainHTTPServer`).
public final class MetricsServer: Service, Sendable {
    /// The address actually bound (a port of 0 is resolved).
    public let host: String
    /// The port actually bound.
    public let port: Int
    private let server: PlainHTTPServer

    /// Starts serving on `host:port` (port 0: any free port).
    ///
    /// - Throws: NIO's error when the address cannot be bound (in use, not local).
    public static func start(host: String, port: Int, render: @escaping @Sendable () async -> String) async throws -> MetricsServer {
        let notFound = "not found: try GET /metrics\n"
        let server = try await PlainHTTPServer.start(host: host, port: port, notFound: notFound) { path in
            guard path == "/metrics" else { return PlainHTTPServer.Answer(status: .notFound, contentType: "text/plain", body: notFound) }
            return PlainHTTPServer.Answer(status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8", body: await render())
        }
        return MetricsServer(server: server)
    }

    private init(server: PlainHTTPServer) {
        self.host = server.host
        self.port = server.port
        self.server = server
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops listening and ends the server's thread.
    public func shutdown() async {
        await server.shutdown()
    }
}
