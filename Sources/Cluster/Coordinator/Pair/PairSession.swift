import Wire

/// Everything a coordinator of a pair keeps about its pair, owned by the coordinator's actor: the rules
/// (`CoordinatorPair`), the stream's two sides (`ReplicationSender` while active, `ReplicationReceiver`
/// while passive), the acknowledgements held for the peer (`AcknowledgementGate`), and the link.
struct PairSession {
    let configuration: PairConfiguration
    /// The failover rules.
    var rules: CoordinatorPair
    /// While active: the stream to the peer.
    var sender: ReplicationSender?
    /// While passive (or starting): the stream from the peer.
    var receiver: ReplicationReceiver
    /// What waits for the peer to hold its record.
    var gate = AcknowledgementGate<Outbound>()
    /// The sockets to the peer.
    let link: PairLink
    /// Where clients and workers reach this coordinator (its hello says so to the peer).
    let serviceEndpoint: String
    /// The peer's hello, as last heard.
    var peerHello: WirePairHello?
    /// Announcements refused (another cluster, another major version, another pair version, unreadable).
    var refusedAnnouncements: UInt64 = 0
    /// What stops the pair, as last said (a peer refused, both started alike, an active peer with an older
    /// journal: `CoordinatorPair`'s `misconfigured`); `nil` once the peer is heard without one. Clients and
    /// workers refused while this coordinator is not active are told it (so is `status`).
    var fault: String?
    /// Records applied from the peer's stream (passive) since the start.
    var appliedRecords: UInt64 = 0
    /// Since when the peer holds less than this journal (active); `nil` while it holds everything.
    var behindSince: ContinuousClock.Instant?

    /// The peer's state as last heard (`nil` before it is).
    var peerState: PairState? { rules.peer?.state }

    /// What clients and workers are told to turn to: the peer's service endpoint as it said, or its link's.
    var otherEndpoint: String {
        if let endpoint = peerHello?.serviceEndpoint, !endpoint.isEmpty { return endpoint }
        return configuration.peer
    }

    /// The hello this coordinator sends.
    func hello(coordinatorID: String) -> WirePairHello {
        WirePairHello(
            cluster: configuration.cluster, major: WireProtocol.major, pairVersion: Self.pairVersion,
            coordinatorID: coordinatorID, serviceEndpoint: serviceEndpoint)
    }

    /// The pair's own protocol version.
    static let pairVersion: UInt32 = 1
}

extension PairAnnouncement {
    /// The rules' view of an announcement from the wire (checked first: `PairSession.problem(with:)`).
    init?(_ wire: WirePairAnnouncement) {
        let role: PairRole
        switch wire.role {
        case .primary: role = .primary
        case .backup: role = .backup
        case .unspecified: return nil
        }
        let state: PairState
        switch wire.state {
        case .startingPrimary: state = .startingPrimary
        case .startingBackup: state = .startingBackup
        case .active: state = .active
        case .passive: state = .passive
        case .unspecified: return nil
        }
        self.init(role: role, state: state, position: JournalPosition(wire.position), peerInStep: wire.peerInStep)
    }

    /// The announcement on the wire.
    func wire(hello: WirePairHello) -> WirePairAnnouncement {
        let wireRole: WirePairRole = role == .primary ? .primary : .backup
        return WirePairAnnouncement(
            hello: hello, role: wireRole, state: WirePairState(state), position: position.wire, peerInStep: peerInStep)
    }
}

extension WirePairState {
    /// A state on the wire.
    init(_ state: PairState) {
        switch state {
        case .startingPrimary: self = .startingPrimary
        case .startingBackup: self = .startingBackup
        case .active: self = .active
        case .passive: self = .passive
        }
    }
}

extension PairConfiguration {
    /// Why a message on the pair's link that could not be decoded is a refused peer rather than noise: an
    /// envelope of another major version is a peer of another major version. `nil` for other errors (a
    /// malformed message, dropped and counted).
    static func problem(decoding error: WireError) -> String? {
        guard case .unsupportedMajorVersion(let received, let supported) = error else { return nil }
        return "the peer speaks major version \(received) of the protocol, this one \(supported): "
            + "run the same major version on both; neither changes its data"
    }

    /// Why an announcement is refused, or `nil` when it is from a peer of this pair.
    func problem(with announcement: WirePairAnnouncement) -> String? {
        guard let hello = announcement.hello else { return "an announcement without its hello" }
        if hello.cluster != cluster {
            return "the peer belongs to another cluster ('\(PrintableText.escape(hello.cluster))'; this one is "
                + "'\(cluster)'): check --cluster and --ha-peer on both; neither changes its data"
        }
        if hello.major != WireProtocol.major {
            return "the peer speaks major version \(hello.major) of the protocol, this one \(WireProtocol.major): "
                + "run the same major version on both; neither changes its data"
        }
        if hello.pairVersion != PairSession.pairVersion {
            return
                "the peer speaks version \(hello.pairVersion) of the pair's protocol, this one \(PairSession.pairVersion): "
                + "run the same version on both; neither changes its data"
        }
        if announcement.role == .unspecified || announcement.state == .unspecified {
            return "the peer's announcement says no role or no state"
        }
        return nil
    }
}
