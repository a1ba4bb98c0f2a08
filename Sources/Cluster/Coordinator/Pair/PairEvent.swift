/// What happens to a coordinator of a pair, in the order it happens (`CoordinatorPair.handle`).
public enum PairEvent: Sendable, Equatable {
    /// The peer's announcement (sent every heartbeat).
    case peerAnnounced(PairAnnouncement)
    /// The active coordinator's stream reached its peer's journal's end: from now on it acknowledges
    /// nothing the peer does not hold (the actor tells this; a passive one never sees it).
    case peerCaughtUp
    /// A client or worker turned to this coordinator (a request, a hello): Binary Star's "client request",
    /// the second half of the condition for a failover. `witnessed` is the furthest journal position an
    /// active coordinator acknowledged something to that peer at (`.empty` for a newcomer): a coordinator
    /// that holds less never takes over on its word, as the active one may have gone on alone.
    case request(witnessed: JournalPosition)
    /// Time passes: the pair's timer (every heartbeat).
    case tick
}
