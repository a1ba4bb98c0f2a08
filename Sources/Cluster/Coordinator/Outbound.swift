import Wire

/// A message the coordinator sends to one peer.
struct Outbound {
    let peer: PeerIdentity
    let message: Message
    /// The peer understands batch messages (minor 1): this message may travel grouped with the next ones
    /// of its kind to the same peer (`Outbound.coalesced`).
    var batchable = false
}

extension Outbound {
    /// `outbound` as messages to send, in order per peer: consecutive batchable messages to one peer are
    /// grouped into batch messages (`MessageBatching`). Peers appear in the order of their first message.
    static func coalesced(_ outbound: [Outbound], limits: MessageBatching.Limits = MessageBatching.Limits()) -> [Outbound] {
        guard outbound.count > 1, outbound.contains(where: \.batchable) else { return outbound }
        // One wake-up may answer a thousand workers: their groups are found by hashing, not by a linear
        // search (which made a burst's grouping quadratic in the number of peers).
        var groups: [(peer: PeerIdentity, items: [Outbound])] = []
        var groupOfPeer: [PeerIdentity: Int] = [:]
        for item in outbound {
            if let index = groupOfPeer[item.peer] {
                groups[index].items.append(item)
            } else {
                groupOfPeer[item.peer] = groups.count
                groups.append((item.peer, [item]))
            }
        }
        var result: [Outbound] = []
        result.reserveCapacity(outbound.count)
        for (peer, items) in groups {
            var run: [Message] = []
            func flush() {
                guard !run.isEmpty else { return }
                for message in MessageBatching.coalesce(run, limits: limits) {
                    result.append(Outbound(peer: peer, message: message))
                }
                run = []
            }
            for item in items {
                if item.batchable {
                    run.append(item.message)
                } else {
                    flush()
                    result.append(item)
                }
            }
            flush()
        }
        return result
    }
}
