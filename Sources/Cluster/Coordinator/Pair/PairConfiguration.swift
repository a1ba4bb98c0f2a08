import Messaging

/// A coordinator of a primary/backup pair (`--ha primary|backup`): where it listens for its peer, where
/// the peer listens, how the two authenticate, and when the peer counts as gone. See docs/failover.md.
public struct PairConfiguration: Sendable, Equatable {
    /// What it was started as: which of the two leads when both start with the same data.
    public var role: PairRole
    /// Where it binds for its peer's stream and announcements (`--ha-listen`).
    public var listen: String
    /// Where the peer listens (`--ha-peer`).
    public var peer: String
    /// The peer's CurveZMQ public key (`--ha-peer-key`; by default the coordinator's own, for a pair that
    /// shares one key pair). Ignored without CurveZMQ.
    public var peerKey: CurvePublicKey?
    /// Silence after which the peer counts as gone (`--failover-timeout`, default 2 s).
    public var failoverTimeout: Duration
    /// The name both coordinators of the pair share (`--cluster`): a peer of another cluster is refused.
    public var cluster: String
    /// Test hook: the passive one waits this long before it answers how far it holds (a slow backup).
    public var answerDelay: Duration = .zero

    /// The default failover timeout.
    public static let defaultFailoverTimeout: Duration = .seconds(2)

    /// A pair's settings.
    public init(
        role: PairRole, listen: String, peer: String, peerKey: CurvePublicKey? = nil,
        failoverTimeout: Duration = Self.defaultFailoverTimeout, cluster: String = "shiftwork"
    ) {
        self.role = role
        self.listen = listen
        self.peer = peer
        self.peerKey = peerKey
        self.failoverTimeout = failoverTimeout
        self.cluster = cluster
    }

    /// The heartbeat of a pair: at most a third of the failover timeout, so that a live peer is heard at
    /// least twice before it could count as gone.
    public func heartbeat(atMost interval: Duration) -> Duration {
        min(interval, failoverTimeout / 3)
    }
}
