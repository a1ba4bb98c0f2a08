import Messaging

/// The ZMTP heartbeats a worker's or client's socket sends when it has several coordinators to turn
/// between (`CoordinatorWatch`): a PING every second on the connection, which the coordinator's libzmq
/// answers in its I/O thread (its actor never sees it). A connection that hears nothing for three seconds
/// is dropped and reported lost by the socket's monitor: a dead host shows in three seconds, a killed
/// process at once (its kernel refuses the reconnects). With one coordinator, sockets are left as they were.
public enum CoordinatorHeartbeats {
    /// How often a PING goes out.
    public static let interval: Duration = .seconds(1)
    /// How long a connection may hear nothing before it is dropped; also the time-to-live sent with each
    /// PING, after which the coordinator drops a connection that stopped pinging.
    public static let timeout: Duration = .seconds(3)

    /// `options` with the heartbeats on: a PING every `interval`, a connection silent for `timeout` dropped
    /// (the coordinators of a pair use their own, from the failover timeout: `PairLink`).
    public static func applied(
        to options: SocketOptions, interval: Duration = Self.interval, timeout: Duration = Self.timeout
    ) -> SocketOptions {
        var options = options
        options.heartbeatIntervalMilliseconds = milliseconds(interval)
        options.heartbeatTimeoutMilliseconds = milliseconds(timeout)
        options.heartbeatTTLMilliseconds = milliseconds(timeout)
        return options
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
