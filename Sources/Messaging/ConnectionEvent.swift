/// A change of a connecting socket's connection to its peer, as the socket's monitor reports it
/// (`SocketChannel.open(onConnectionEvent:)`): what a worker or client with several coordinators watches to
/// know whether its coordinator is there, without asking it anything (libzmq's I/O thread answers the
/// ZMTP heartbeats, docs/failover.md).
public enum ConnectionEvent: Sendable, Equatable {
    /// A connection to `endpoint` finished its ZMTP handshake: the peer is there and speaks ZMTP
    /// (`ZMQ_EVENT_HANDSHAKE_SUCCEEDED`).
    case live(endpoint: String)
    /// The connection to `endpoint` ended: the peer closed it, it broke, or no ZMTP heartbeat answer came
    /// within the heartbeat timeout (`ZMQ_EVENT_DISCONNECTED`). libzmq reconnects by itself.
    case lost(endpoint: String)
}
