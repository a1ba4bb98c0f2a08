/// The workers with free slots, by how many they have free: a bucket per free-slot count, so that the
/// least loaded worker (the most free slots) is found in O(1) and a slot taken or freed moves its worker
/// between buckets in O(1). The dispatcher keeps it up to date whenever a worker's free slots change
/// (a task sent, a result, a kept slot given back, a worker registering, draining, leaving or dying),
/// so that sending the next task never scans the workers (docs/benchmarks.md, "A thousand simulated
/// workers").
///
/// Among workers with as many free slots, the one at the end of their bucket is picked (a worker enters
/// a bucket at its end, so one whose slot was just freed is picked before its ties); taking its slot moves
/// it to the next bucket down, so tasks go round the tied workers in turn.
struct FreeSlotIndex {
    /// `buckets[n]`: the workers with `n` free slots (`buckets[0]` stays empty: they are not indexed).
    private var buckets: [[PeerIdentity]] = [[]]
    /// Where each indexed worker is: its bucket (free slots) and its place in it.
    private var places: [PeerIdentity: (freeSlots: Int, position: Int)] = [:]
    /// The highest non-empty bucket (0: none).
    private var highest = 0

    /// Whether no worker has a free slot.
    var isEmpty: Bool { places.isEmpty }
    /// How many workers have at least one free slot.
    var count: Int { places.count }

    /// The free slots the index holds for `peer` (0 when it is not indexed).
    func freeSlots(of peer: PeerIdentity) -> Int { places[peer]?.freeSlots ?? 0 }

    /// Records that `peer` now has `freeSlots` free slots (0 or less: it is taken out).
    mutating func set(_ peer: PeerIdentity, freeSlots: Int) {
        if let place = places[peer] {
            if place.freeSlots == freeSlots { return }
            takeOut(peer, from: place)
        }
        guard freeSlots > 0 else {
            lowerHighest()
            return
        }
        while buckets.count <= freeSlots { buckets.append([]) }
        places[peer] = (freeSlots, buckets[freeSlots].count)
        buckets[freeSlots].append(peer)
        highest = max(highest, freeSlots)
        lowerHighest()
    }

    /// Forgets `peer` (it left or died).
    mutating func remove(_ peer: PeerIdentity) { set(peer, freeSlots: 0) }

    /// The worker to send the next task to: the one with the most free slots. `avoiding` (a retry's last
    /// worker) is passed over when any other worker has a free slot, and picked only when it is alone.
    func next(avoiding avoided: PeerIdentity? = nil) -> PeerIdentity? {
        guard highest > 0, let best = buckets[highest].last else { return nil }
        guard let avoided, best == avoided else { return best }
        let top = buckets[highest]
        if top.count > 1 { return top[top.count - 2] }
        var slots = highest - 1
        while slots > 0 {
            if let other = buckets[slots].last { return other }
            slots -= 1
        }
        return best
    }

    /// Removes `peer` from its bucket by moving the bucket's last worker into its place.
    private mutating func takeOut(_ peer: PeerIdentity, from place: (freeSlots: Int, position: Int)) {
        places[peer] = nil
        let last = buckets[place.freeSlots].removeLast()
        if last != peer {
            buckets[place.freeSlots][place.position] = last
            places[last]?.position = place.position
        }
    }

    /// Moves `highest` down to the highest non-empty bucket (bounded by the largest slot count).
    private mutating func lowerHighest() {
        while highest > 0, buckets[highest].isEmpty { highest -= 1 }
    }
}
