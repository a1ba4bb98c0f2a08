import Messaging

/// When a worker or client with several coordinators (a pair, docs/failover.md) turns to the next one:
/// a value, fed the socket monitor's connection events and the coordinator's passive refusals, asked for a
/// verdict on every tick. It asks the coordinator nothing: libzmq's ZMTP heartbeats
/// (`SocketOptions.heartbeatIntervalMilliseconds`), answered in the coordinator's I/O thread, end a
/// connection to a dead host, and a killed process refuses the reconnects.
///
/// - No live connection (no handshake since the socket opened, or the connection lost and not back) for
///   `silenceTimeout`: turn.
/// - Refused as passive (`RefusalCode.passive`: the other coordinator of the pair is the active one):
///   turn at once; when every endpoint of the list said passive in a row (the pair is settling who is
///   active), turn after `passiveBackOff`, so that the peer does not spin between the two.
public struct CoordinatorWatch: Sendable, Equatable {
    /// Why to turn.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// No live connection for this long.
        case silent(for: Duration)
        /// The coordinator refused as passive.
        case passive

        public var description: String {
            switch self {
            case .silent(let duration): "no live connection for \(duration)"
            case .passive: "the coordinator is the passive one of its pair"
            }
        }
    }

    /// What to do now.
    public enum Verdict: Sendable, Equatable {
        /// Stay with this coordinator.
        case stay
        /// Turn to the next coordinator, and call ``turned(now:)`` once connected to it.
        case turn(Reason)
    }

    /// How long a peer may have no live connection to its coordinator before it turns.
    public let silenceTimeout: Duration
    /// How many coordinators the list has.
    public let endpointCount: Int
    /// The wait before turning again once every coordinator said passive in a row.
    public let passiveBackOff: Duration
    /// Whether a connection to the coordinator is live (handshake done, not lost since).
    public private(set) var isLive = false
    /// Since when no connection is live (the socket's opening, or the loss); `nil` while live.
    private var downSince: ContinuousClock.Instant?
    /// Passive refusals in a row, across turns, with no other answer between them.
    private var passiveInARow = 0
    /// When to turn because of a passive refusal (at once, or after the back-off).
    private var passiveTurnDue: ContinuousClock.Instant?

    /// A watch of a socket just opened to the first coordinator of `endpointCount` (nothing live yet).
    public init(
        endpointCount: Int, silenceTimeout: Duration, passiveBackOff: Duration = .seconds(1),
        now: ContinuousClock.Instant
    ) {
        self.endpointCount = max(1, endpointCount)
        self.silenceTimeout = silenceTimeout
        self.passiveBackOff = passiveBackOff
        self.downSince = now
    }

    /// The socket monitor reported a connection live or lost.
    public mutating func connection(_ event: ConnectionEvent, now: ContinuousClock.Instant) {
        switch event {
        case .live:
            isLive = true
            downSince = nil
        case .lost:
            if isLive || downSince == nil { downSince = now }
            isLive = false
        }
    }

    /// The coordinator refused a request (or the hello) as the passive one of its pair.
    public mutating func refusedAsPassive(now: ContinuousClock.Instant) {
        guard passiveTurnDue == nil else { return }  // a turn is due already: later refusals add nothing
        passiveInARow += 1
        passiveTurnDue = passiveInARow % endpointCount == 0 ? now + passiveBackOff : now
    }

    /// The coordinator answered something else than a passive refusal: it is the active one.
    public mutating func answered() {
        passiveInARow = 0
    }

    /// Whether to turn now.
    public func verdict(now: ContinuousClock.Instant) -> Verdict {
        if let due = passiveTurnDue { return now >= due ? .turn(.passive) : .stay }
        if !isLive, let downSince, now - downSince >= silenceTimeout { return .turn(.silent(for: now - downSince)) }
        return .stay
    }

    /// The peer turned: a new socket, nothing live on it yet. Passive refusals in a row are remembered.
    public mutating func turned(now: ContinuousClock.Instant) {
        isLive = false
        downSince = now
        passiveTurnDue = nil
    }
}
