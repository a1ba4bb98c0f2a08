import CZeroMQ

/// Options applied to a socket before it binds or connects.
public struct SocketOptions: Sendable, Equatable {
    /// How long unsent messages may delay closing, in milliseconds. Finite, so shutdown never hangs.
    public var lingerMilliseconds: Int32 = 500
    /// Queue limits in messages, per peer. They are a memory bound, not flow control: Shiftwork's
    /// scheduler sends a worker only as many tasks as it has free slots.
    public var sendHighWaterMark: Int32 = 100_000
    /// See `sendHighWaterMark`.
    public var receiveHighWaterMark: Int32 = 100_000
    /// The largest message frame accepted, in bytes; a peer that sends a larger one is disconnected
    /// by libzmq. `-1` means no limit.
    public var maxMessageSize: Int64 = 256 << 20
    /// A stable identity for a DEALER (the coordinator's ROUTER sees it as the peer's first frame).
    public var identity: [UInt8]? = nil
    /// For a ROUTER: report unroutable messages (the peer is gone) instead of dropping them silently.
    public var routerMandatory: Bool = true
    /// For a ROUTER: a new peer with an identity already in use takes it over (a restarted worker).
    public var routerHandover: Bool = true
    /// ZMTP heartbeat interval in milliseconds (0: off): the socket sends a ZMTP PING this often on each
    /// connection (`ZMQ_HEARTBEAT_IVL`). The peer's libzmq answers it in its I/O thread, whatever its
    /// application does: it detects dead links and hosts, not a stuck application.
    public var heartbeatIntervalMilliseconds: Int32 = 0
    /// How long a connection may go without any traffic after a PING before the socket drops it (and
    /// reports it lost to its monitor), in milliseconds (`ZMQ_HEARTBEAT_TIMEOUT`); 0: three intervals.
    /// Only with `heartbeatIntervalMilliseconds` on.
    public var heartbeatTimeoutMilliseconds: Int32 = 0
    /// How long the peer may keep the connection without hearing from this socket, sent with each PING
    /// (`ZMQ_HEARTBEAT_TTL`, rounded down to tenths of a second by libzmq; 0: no limit): a peer that stops
    /// pinging is dropped by the other side too. Only with `heartbeatIntervalMilliseconds` on.
    public var heartbeatTTLMilliseconds: Int32 = 0
    /// Reconnect back-off for connecting sockets, in milliseconds.
    public var reconnectIntervalMilliseconds: Int32 = 100
    /// Upper bound of the reconnect back-off, in milliseconds.
    public var reconnectIntervalMaxMilliseconds: Int32 = 2_000
    /// IPv6 and dual stack (`ZMQ_IPV6`). `nil` (the default): on for a socket whose endpoints need it, an
    /// IPv6 address (`tcp://[::1]:5570`, `tcp://[fd00::10]:5570`), `tcp://*:PORT` (IPv4 and IPv6 peers on
    /// one socket) or a host name that may resolve to IPv6; off where every endpoint is an IPv4 address,
    /// which then behaves as it always did (``EndpointFamily``). `true` or `false` force it. Off, libzmq
    /// refuses IPv6 addresses (`bind tcp://[::1]:5570: No such device`) and resolves names to IPv4 only.
    /// On a host without IPv6 at all, libzmq falls back to IPv4 by itself.
    public var ipv6: Bool? = nil
    /// CurveZMQ authentication and encryption (`nil`: none, ZeroMQ's NULL mechanism).
    public var curve: CurveSecurity? = nil

    /// The defaults described on each property.
    public init() {}
}
