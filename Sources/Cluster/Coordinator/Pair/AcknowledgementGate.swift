/// Holds back what the active coordinator of a pair acknowledges until its peer holds it, free of I/O.
///
/// While the pair's history is `active-with-peer` (`isHolding`), a message that follows a journal record
/// waits until the peer's answer (`peerHolds`) covers the journal's position when it was sent; a message
/// that follows no new record goes at once, unless an earlier message to the same peer still waits (a
/// peer's messages keep their order). When the peer is gone (`release`, history `active-alone`), everything
/// waiting goes, and messages go at once until the peer is in step again (`hold`).
struct AcknowledgementGate<Message> {
    private struct Waiting {
        let after: JournalPosition
        let peer: PeerIdentity
        let message: Message
        let since: ContinuousClock.Instant
    }

    /// Whether messages wait for the peer (history `active-with-peer`).
    private(set) var isHolding = false
    /// How far the peer holds this coordinator's journal.
    private(set) var held: JournalPosition = .empty
    private var waiting: [Waiting] = []
    private var firstWaiting = 0
    private var waitingPerPeer: [PeerIdentity: Int] = [:]

    /// Messages waiting for the peer.
    var waitingCount: Int { waiting.count - firstWaiting }

    /// Since when the oldest waiting message waits (`nil`: none waits).
    var oldestWaitingSince: ContinuousClock.Instant? {
        firstWaiting < waiting.count ? waiting[firstWaiting].since : nil
    }

    /// Messages to `peer`, each following a journal record written up to `following` (`nil`: none new), sent
    /// at `now`: returns those that may go now, in order; the others wait.
    mutating func submit(
        _ messages: [Message], to peer: (Message) -> PeerIdentity, following: JournalPosition?,
        now: ContinuousClock.Instant
    ) -> [Message] {
        guard isHolding else { return messages }
        var now_: [Message] = []
        for message in messages {
            let destination = peer(message)
            let needs = following.map { $0 > held } ?? false
            if !needs, waitingPerPeer[destination, default: 0] == 0 {
                now_.append(message)
                continue
            }
            waiting.append(Waiting(after: following ?? held, peer: destination, message: message, since: now))
            waitingPerPeer[destination, default: 0] += 1
        }
        return now_
    }

    /// The peer holds the journal up to `position`: returns the messages that may go now, in order.
    mutating func peerHolds(_ position: JournalPosition) -> [Message] {
        held = max(held, position)
        var released: [Message] = []
        while firstWaiting < waiting.count, waiting[firstWaiting].after <= held {
            released.append(take())
        }
        compact()
        return released
    }

    /// From now on messages wait for the peer (history `active-with-peer`), which holds `position`.
    mutating func hold(peerHolds position: JournalPosition) {
        isHolding = true
        held = position
    }

    /// The peer is gone (history `active-alone`): returns every waiting message; none waits from now on.
    mutating func release() -> [Message] {
        isHolding = false
        var released: [Message] = []
        while firstWaiting < waiting.count { released.append(take()) }
        compact()
        return released
    }

    private mutating func take() -> Message {
        let next = waiting[firstWaiting]
        firstWaiting += 1
        waitingPerPeer[next.peer, default: 1] -= 1
        if waitingPerPeer[next.peer] == 0 { waitingPerPeer[next.peer] = nil }
        return next.message
    }

    private mutating func compact() {
        if firstWaiting == waiting.count {
            waiting = []
            firstWaiting = 0
        } else if firstWaiting > 1024, firstWaiting * 2 > waiting.count {
            waiting.removeFirst(firstWaiting)
            firstWaiting = 0
        }
    }
}
