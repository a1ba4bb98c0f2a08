import Messaging

/// How a client comes to exist: within a scope that connects, runs a body with the client and closes the
/// connection when the body ends (returns or throws), having waited for every task of the connection.
extension ClusterClient {
    /// Connects to the coordinators `endpoints` (one, or a pair: the client turns to the next when its own
    /// has had no live connection for `silenceTimeout` or refuses it as passive, and tells `onTurn`), runs
    /// `body` with the client, then closes it and ends its ZeroMQ context, whatever `body` did.
    ///
    /// ZeroMQ connects lazily: an absent coordinator shows as `ClusterClientError.noAnswer` on the first
    /// request, after `responseTimeout`. While a batch runs, the client asks for its status every
    /// `livenessInterval`, to notice a coordinator that stopped answering.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; `ZeroMQError` when the socket cannot be opened (a malformed endpoint).
    public static func withConnection<Value>(
        to endpoints: CoordinatorEndpoints, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2),
        silenceTimeout: Duration = ClusterDefaults.clientSilenceTimeout,
        onTurn: (@Sendable (CoordinatorTurn) -> Void)? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ClusterClient) async throws -> Value
    ) async throws -> Value {
        let client = try await ClusterClient(
            endpoints: endpoints, context: nil, responseTimeout: responseTimeout, socketOptions: socketOptions,
            livenessInterval: livenessInterval, silenceTimeout: silenceTimeout, onTurn: onTurn)
        return try await run(client, body)
    }

    /// Connects to the one coordinator at `endpoint`, runs `body` with the client, then closes it (see
    /// ``withConnection(to:responseTimeout:socketOptions:livenessInterval:silenceTimeout:onTurn:isolation:_:)``).
    public static func withConnection<Value>(
        endpoint: String, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ClusterClient) async throws -> Value
    ) async throws -> Value {
        try await withConnection(
            to: CoordinatorEndpoints(single: endpoint), responseTimeout: responseTimeout,
            socketOptions: socketOptions, livenessInterval: livenessInterval, body)
    }

    /// Connects within `context`, which stays the caller's to terminate (shared with an in-process
    /// coordinator for `inproc://`, as `EmbeddedCluster` does), runs `body`, then closes the client.
    package static func withConnection<Value>(
        endpoint: String, context: MessagingContext, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ClusterClient) async throws -> Value
    ) async throws -> Value {
        let client = try await ClusterClient(
            endpoints: CoordinatorEndpoints(single: endpoint), context: context, responseTimeout: responseTimeout,
            socketOptions: socketOptions, livenessInterval: livenessInterval,
            silenceTimeout: ClusterDefaults.clientSilenceTimeout, onTurn: nil)
        return try await run(client, body)
    }
}
