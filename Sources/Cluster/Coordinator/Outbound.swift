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
    static func coalesced(
        _ outbound: [Outbound], limits: MessageBatching.Limits = MessageBatching.Limits()
    ) -> [Outbound] {
        guard outbound.count > 1, outbound.contains(where: \.batchable) else { return outbound }
        // One wake-up may answer a thousand workers: their groups are found by hashing, not by a linear
        // search (which made a burst's grouping quadratic in the number of peers). A group is a chain of
        // indices into `outbound` (`next`), so no message is copied before it joins its batch message.
        var next = [Int](repeating: -1, count: outbound.count)
        var lastOfPeer: [PeerIdentity: Int] = [:]
        lastOfPeer.reserveCapacity(outbound.count)
        var firsts: [Int] = []
        for index in outbound.indices {
            if let position = lastOfPeer.index(forKey: outbound[index].peer) {
                next[lastOfPeer.values[position]] = index
                lastOfPeer.values[position] = index
            } else {
                lastOfPeer[outbound[index].peer] = index
                firsts.append(index)
            }
        }
        var result: [Outbound] = []
        result.reserveCapacity(firsts.count)
        var grouping = MessageBatching.Grouping(limits: limits)
        for first in firsts {
            let peer = outbound[first].peer
            var index = first
            while index >= 0 {
                if outbound[index].batchable {
                    grouping.add(outbound[index].message)
                } else {
                    grouping.finish { result.append(Outbound(peer: peer, message: $0)) }
                    result.append(outbound[index])
                }
                index = next[index]
            }
            grouping.finish { result.append(Outbound(peer: peer, message: $0)) }
        }
        return result
    }
}
