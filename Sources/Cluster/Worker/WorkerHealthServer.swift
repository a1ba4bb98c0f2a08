import HTTPEndpoints
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
    private let server: HTTPEndpointServer

    /// Starts serving `health` on `host:port` (port 0: any free port).
    ///
    /// - Throws: `HTTPEndpointError` when the address cannot be bound.
    public static func start(
        host: String, port: Int, health: @escaping @Sendable () async -> WorkerHealth
    ) async throws -> WorkerHealthServer {
        let notFound = HTTPEndpointReply.complete(
            status: 404, headers: [("Content-Type", "text/plain")],
            body: Array("not found: try GET /livez or /readyz\n".utf8))
        let server = try HTTPEndpointServer.start(host: host, port: port) { request, _ in
            let path = request.path
            guard request.method == "GET" || request.method == "HEAD", ["/livez", "/readyz", "/healthz"].contains(path)
            else {
                return notFound
            }
            let state = blockingAwait(health)
            let ok = path == "/livez" || state.isReady
            return .complete(
                status: ok ? 200 : 503, headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Array((state.summary + "\n").utf8))
        }
        return WorkerHealthServer(server: server)
    }

    private init(server: HTTPEndpointServer) {
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
