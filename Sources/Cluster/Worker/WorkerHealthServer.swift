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
    public var host: String { server.host }
    /// The port actually bound (a port of 0 is resolved).
    public var port: Int { server.port }
    private let server: PlainHTTPServer

    /// Starts serving `health` on `host:port` (port 0: any free port).
    ///
    /// - Throws: NIO's error when the address cannot be bound.
    public static func start(host: String, port: Int, health: @escaping @Sendable () async -> WorkerHealth) async throws -> WorkerHealthServer {
        let notFound = "not found: try GET /livez or /readyz\n"
        let server = try await PlainHTTPServer.start(host: host, port: port, notFound: notFound) { path in
            guard ["/livez", "/readyz", "/healthz"].contains(path) else {
                return PlainHTTPServer.Answer(status: .notFound, contentType: "text/plain", body: notFound)
            }
            let state = await health()
            let ok = path == "/livez" || state.isReady
            return PlainHTTPServer.Answer(status: ok ? .ok : .serviceUnavailable, contentType: "text/plain; charset=utf-8",
                                          body: state.summary + "\n")
        }
        return WorkerHealthServer(server: server)
    }

    private init(server: PlainHTTPServer) {
        self.server = server
    }

    /// Serves until graceful shutdown or cancellation, then stops listening.
    public func run() async throws {
        await PlainHTTPServer.serveUntilGracefulShutdown(then: shutdown)
    }

    /// Stops listening and ends the server's thread.
    public func shutdown() async {
        await server.shutdown()
    }
}
