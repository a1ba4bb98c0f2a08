/// The only ways a worker's slots change: each keeps the `FreeSlotIndex` in step with the records, so that
/// dispatch never has to scan `workers` for free slots.
extension Dispatcher {
    /// Adds a worker's record (a registration) and indexes its free slots.
    mutating func addWorker(_ record: WorkerRecord) {
        workers[record.peer] = record
        freeSlotIndex.set(record.peer, freeSlots: record.freeSlots)
    }

    /// Takes a worker's record out (it left or died), and out of the index.
    mutating func dropWorker(_ peer: PeerIdentity) -> WorkerRecord? {
        freeSlotIndex.remove(peer)
        return workers.removeValue(forKey: peer)
    }

    /// `key` takes one of `peer`'s slots (sent there, or a slot kept there for it).
    mutating func occupy(_ key: TaskKey, on peer: PeerIdentity) {
        guard let index = workers.index(forKey: peer) else { return }
        workers.values[index].running.insert(key)
        freeSlotIndex.set(peer, freeSlots: workers.values[index].freeSlots)
    }

    /// `key` gives back its slot on `peer` (answered, found lost, or a kept slot released).
    mutating func vacate(_ key: TaskKey, on peer: PeerIdentity) {
        guard let index = workers.index(forKey: peer) else { return }
        workers.values[index].running.remove(key)
        freeSlotIndex.set(peer, freeSlots: workers.values[index].freeSlots)
    }

    /// The worker drains: it keeps its tasks and gets no new ones.
    mutating func setDraining(_ peer: PeerIdentity) {
        guard let index = workers.index(forKey: peer) else { return }
        workers.values[index].draining = true
        freeSlotIndex.remove(peer)
    }

    /// The next assignment's sequence, above every one sent before (`lastSequence`).
    mutating func nextSequence() -> UInt64 {
        lastSequence += 1
        return lastSequence
    }
}
