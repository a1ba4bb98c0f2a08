/// The bound on a witnessed position (docs/failover.md, "The witnessed position"): a client or worker says
/// how far an active coordinator acknowledged something to it, and a coordinator behind that neither takes
/// over nor stays active. The number comes from the network, from a peer that is authenticated but not
/// trusted with the pair's fate: a position that no coordinator could have written is refused (counted in
/// `implausibleWitnesses`) and changes nothing.
extension CoordinatorPair {
    /// How many terms a witnessed position may be beyond the furthest term this coordinator knows (its own
    /// journal's, or the one its peer last announced): the peer's one takeover that this coordinator has not
    /// heard of (its next term of its parity is at most two on). More would need the peer to take over again,
    /// restarted alone, while this one still cannot hear it: refused, which keeps the data where it is.
    static let witnessedTermsAhead: UInt64 = 2

    /// Why `witnessed` (beyond this coordinator's position) cannot be what a coordinator acknowledged, or
    /// `nil` when it can be.
    func implausibility(of witnessed: JournalPosition, now: ContinuousClock.Instant) -> String? {
        let knownTerm = max(position.term, peer?.position.term ?? 0)
        if witnessed.term > knownTerm &+ Self.witnessedTermsAhead {
            return "more than \(Self.witnessedTermsAhead) terms beyond term \(knownTerm), the furthest either "
                + "coordinator of the pair is known to have reached"
        }
        guard state == .active else { return nil }  // a coordinator that is not active only refuses on it
        let ownParity: UInt64 = role == .primary ? 0 : 1
        if witnessed.term > position.term, witnessed.term % 2 == ownParity {
            // Only this coordinator starts the terms of its parity (a takeover), and it never started this one.
            return "in a term of this coordinator's own (\(role.rawValue)) that it never started"
        }
        if let peer, !peerIsGone(now: now) {
            switch peer.state {
            case .active:
                // Both active: the peer's journal may have gone on since its last announcement, within its term.
                if witnessed.term > peer.position.term {
                    return "in a term beyond both journals (\(position) here, \(peer.position) on the active peer)"
                }
            case .passive, .startingPrimary, .startingBackup:
                // The peer is heard and does not serve: nothing beyond both journals was acknowledged.
                if witnessed > peer.position {
                    return "beyond both journals (\(position) here, \(peer.position) on the peer, heard "
                        + "within the failover timeout)"
                }
            }
        }
        return nil
    }
}
