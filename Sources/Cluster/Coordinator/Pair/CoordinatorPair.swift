/// The failover rules of a primary/backup pair of coordinators, free of I/O: events in
/// (`PairEvent`: the peer's announcements, requests from clients and workers, time), effects out
/// (`PairEffect`), as `Dispatcher` is for dispatch.
///
/// The rules are Binary Star's (the ZeroMQ guide, chapter 4), made safe for the data each coordinator
/// journals:
/// - **Failover needs two witnesses.** A passive coordinator takes over only when it has not heard the
///   active one for `failoverTimeout` *and* a client or worker turns to it. One that merely lost sight of
///   its peer while nobody else did stays passive: a link broken between the two alone never makes two
///   active coordinators.
/// - **Never with older data.** A coordinator becomes active only if it holds everything the other
///   acknowledged: a passive one that was in step with the active one (`PairAnnouncement.peerInStep`), a
///   starting one whose journal is at least as far as the peer's, or one restarted alone whose own history
///   says nobody could have gone further (`PairHistory.mayTakeOverAlone`). Otherwise it waits for its peer
///   and follows it. The peers that turn to it are witnesses too: each says how far the journal was when
///   an active coordinator last acknowledged something to it (`PairEvent.request(witnessed:)`), and a
///   coordinator behind that does not take over (the active one, cut from its peer, went on alone). An active peer whose journal is *older* than one's own is not followed: the operator
///   is told (`misconfigured`), and neither side changes its data.
/// - **Configured alike** (both primary, or both backup): said on every announcement, and neither becomes
///   active through the other; each refuses requests while it hears the other.
/// - **Both active** (possible only when a partition cut the pair apart while peers reached each side):
///   the one with the older journal steps down (`splitBrain`); the rules above make it a fault of the
///   network, never of a start.
public struct CoordinatorPair: Sendable {
    /// What this coordinator was started as.
    public let role: PairRole
    /// Silence after which the peer counts as gone.
    public let failoverTimeout: Duration
    /// Where it stands now.
    public private(set) var state: PairState
    /// What its journal says it last was (updated through `PairEffect.record`).
    public private(set) var history: PairHistory
    /// How far its own journal goes: the actor keeps it current as it writes or applies records.
    public var position: JournalPosition
    /// The peer's last announcement, if one was heard since the start.
    public private(set) var peer: PairAnnouncement?
    /// When the peer was last heard (the start, until it is).
    private var peerLastHeard: ContinuousClock.Instant
    /// Witnessed positions beyond anything either coordinator could have written (`implausibility(of:now:)`):
    /// counted, never acted on (their requests are handled as requests without one).
    public internal(set) var implausibleWitnesses: UInt64 = 0

    /// A coordinator of a pair, starting: `history` and `position` are read from its journal.
    public init(
        role: PairRole, failoverTimeout: Duration, history: PairHistory, position: JournalPosition,
        now: ContinuousClock.Instant
    ) {
        self.role = role
        self.failoverTimeout = failoverTimeout
        self.state = role == .primary ? .startingPrimary : .startingBackup
        self.history = history
        self.position = position
        self.peerLastHeard = now
    }

    /// Whether the peer has been silent for the failover timeout.
    public func peerIsGone(now: ContinuousClock.Instant) -> Bool {
        now - peerLastHeard >= failoverTimeout
    }

    /// What this coordinator announces to its peer now.
    public var announcement: PairAnnouncement {
        PairAnnouncement(
            role: role, state: state, position: position,
            peerInStep: state == .active && history == .activeWithPeer)
    }

    /// Applies one event; returns what to do, in order.
    public mutating func handle(_ event: PairEvent, now: ContinuousClock.Instant) -> [PairEffect] {
        switch event {
        case .peerAnnounced(let announcement):
            peerLastHeard = now
            peer = announcement
            return peerAnnounced(announcement)
        case .peerCaughtUp:
            guard state == .active, history != .activeWithPeer else { return [] }
            return [set(.activeWithPeer)]
        case .request(let witnessed):
            return request(witnessed: witnessed, now: now)
        case .tick:
            guard state == .active, history == .activeWithPeer, peerIsGone(now: now) else { return [] }
            // The peer is gone: acknowledging only what it holds would stop the cluster, so go on alone,
            // and say so in the journal (a restart may then take over alone).
            return [set(.activeAlone)]
        }
    }

    // MARK: - The rules

    private mutating func peerAnnounced(_ peer: PairAnnouncement) -> [PairEffect] {
        if peer.role == role {
            // Neither leads through the other; two active ones (each taken over alone, unable to hear the other)
            // step down unless one holds the newer journal.
            var effects: [PairEffect] = [
                .misconfigured(
                    reason: "both coordinators of the pair were started as "
                        + "\(role.rawValue): start one with --ha primary and the other with --ha backup")
            ]
            if state == .active, peer.state == .active, peer.position >= position {
                effects += becomePassive("two active coordinators started alike: this one holds no newer journal")
            }
            return effects
        }
        switch (state, peer.state) {
        case (.startingPrimary, .startingBackup), (.startingBackup, .startingPrimary):
            // Both starting: the newer journal leads; with equal journals, the primary.
            if peer.position > position {
                return becomePassive(
                    "the peer holds a newer journal (\(peer.position) against \(position)): following it")
            }
            if peer.position == position, role == .backup { return [] }
            return becomeActive(takeover: false, "the peer is starting and holds no newer journal")
        case (.startingPrimary, .active), (.startingBackup, .active), (.passive, .active):
            if peer.position < position, state != .passive {
                return [
                    .misconfigured(
                        reason: "the active coordinator's journal (\(peer.position)) is older than this "
                            + "one's (\(position)): not replacing it; keep the data you want, move the other data directory "
                            + "away, and start that coordinator again")
                ]
            }
            return state == .passive ? [] : becomePassive("the peer is active")
        case (.startingPrimary, .passive), (.startingBackup, .passive):
            // The peer follows nobody now (it followed this one before its restart, or chose to follow):
            // lead if nothing newer is there; otherwise the passive one, in step, takes over itself.
            guard peer.position < position else { return [] }
            return becomeActive(takeover: false, "the peer is passive and holds an older journal")
        case (.passive, .startingPrimary), (.passive, .startingBackup):
            // The active one restarted, and says how far its journal goes: take over if this one goes as
            // far (whether it was in step before is no proof: the other may have gone on alone since). If
            // not, the restarted one leads (the rule of a starting coordinator that hears a passive one).
            guard position >= peer.position else { return [] }
            return becomeActive(takeover: true, "the active coordinator restarted; this one holds all it acknowledged")
        case (.passive, .passive):
            // Both follow: the newer journal leads; with equal journals, the primary.
            guard position > peer.position || (position == peer.position && role == .primary) else { return [] }
            return becomeActive(takeover: true, "both coordinators were passive; this one holds the newer journal")
        case (.active, .active):
            let peerLeads = peer.position > position || (peer.position == position && peer.role == .primary)
            let reason =
                "both coordinators are active (the pair was cut apart while clients or workers reached "
                + "both): \(peerLeads ? "this one steps down" : "the peer steps down"); journals \(position) here, "
                + "\(peer.position) there"
            guard peerLeads else { return [.splitBrain(reason: reason)] }
            return [.splitBrain(reason: reason)] + becomePassive("a split brain: the peer holds the newer journal")
        case (.active, .startingPrimary), (.active, .startingBackup):
            // The peer restarted: until it catches up again, it holds less than this one acknowledges.
            return history == .activeWithPeer ? [set(.activeAlone)] : []
        case (.active, .passive), (.startingPrimary, .startingPrimary), (.startingBackup, .startingBackup):
            return []
        }
    }

    private mutating func request(witnessed: JournalPosition, now: ContinuousClock.Instant) -> [PairEffect] {
        if witnessed > position, let implausible = implausibility(of: witnessed, now: now) {
            // Nothing either coordinator could have written: the value is refused (counted) and the request
            // handled as one that carries none, which any peer may send (an active one does not step down on it:
            // one hostile request must not stop the cluster).
            implausibleWitnesses += 1
            let reason =
                "the request's witnessed journal position (\(witnessed)) is \(implausible); this coordinator's "
                + "journal is at \(position): ignored"
            return [.implausibleWitness(reason: reason)] + request(witnessed: .empty, now: now)
        }
        if witnessed > position {
            let reason =
                "this coordinator's journal (\(position)) is behind what the peer turning to it was "
                + "acknowledged (\(witnessed)): the other coordinator went on without this one, and only it holds that"
            // An active one that hears of a newer journal was replaced while it was cut off: it steps down.
            return (state == .active ? becomePassive(reason) : []) + [.refuse(reason: reason)]
        }
        switch state {
        case .active:
            return [.accept]
        case .passive:
            guard peerIsGone(now: now) else {
                return [.refuse(reason: "this coordinator is the passive one of its pair: the active one is alive")]
            }
            guard peer?.peerInStep == true else {
                return [
                    .refuse(
                        reason: "this coordinator is passive and was still catching up when the active one "
                            + "went silent: it cannot take over without losing what that one acknowledged")
                ]
            }
            return becomeActive(takeover: true, "the active coordinator is silent and a peer turned to this one")
                + [.accept]
        case .startingPrimary, .startingBackup:
            guard peerIsGone(now: now) else {
                return [.refuse(reason: "this coordinator is starting: it has not settled with its pair yet")]
            }
            guard history.mayTakeOverAlone else {
                return [
                    .refuse(
                        reason:
                            "this coordinator was \(history == .passive ? "passive" : "active with its peer in step") "
                            + "before it stopped, and its peer is silent: it waits for its peer, which may have gone further "
                            + "(see docs/deployment.md for bringing a pair back with one coordinator lost)")
                ]
            }
            return becomeActive(takeover: true, "the peer is silent and a peer turned to this one") + [.accept]
        }
    }

    private mutating func becomeActive(takeover: Bool, _ reason: String) -> [PairEffect] {
        state = .active
        if takeover {
            // The next term of this role's parity (the primary's even, the backup's odd): two coordinators that
            // took over apart never share a term, so two histories that forked are told apart by it.
            let parity: UInt64 = role == .primary ? 0 : 1
            position.term += position.term % 2 == parity ? 2 : 1
        }
        // Alone until the peer catches up (`peerCaughtUp`).
        return [.becomeActive(takeover: takeover, reason: reason), set(.activeAlone)]
    }

    private mutating func becomePassive(_ reason: String) -> [PairEffect] {
        state = .passive
        return [.becomePassive(reason: reason), set(.passive)]
    }

    private mutating func set(_ newHistory: PairHistory) -> PairEffect {
        history = newHistory
        return .record(newHistory)
    }
}
