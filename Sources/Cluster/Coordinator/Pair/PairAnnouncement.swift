/// What a coordinator of a pair tells the other every heartbeat.
public struct PairAnnouncement: Sendable, Equatable {
    /// What it was started as.
    public var role: PairRole
    /// Where it stands.
    public var state: PairState
    /// How far its journal goes.
    public var position: JournalPosition
    /// For an active coordinator: whether its peer is in step (it acknowledges nothing the peer does not
    /// hold). A passive coordinator may take over only if it was in step when it last heard the active one.
    public var peerInStep: Bool

    /// An announcement.
    public init(role: PairRole, state: PairState, position: JournalPosition, peerInStep: Bool = false) {
        self.role = role
        self.state = state
        self.position = position
        self.peerInStep = peerInStep
    }
}
