import Wire

/// Sending ready tasks to free slots: pinned tasks to their worker first, then the fair-share queue's
/// tasks to the least loaded worker, found in the `FreeSlotIndex` without scanning the workers.
extension Dispatcher {
    /// Sends the tasks pinned to a worker (their input is there) to it while it has free slots: they go
    /// before the shared queue.
    private mutating func dispatchPinned() -> [Outbound] {
        var out: [Outbound] = []
        for peer in workersWithPinned {
            while let worker = workers[peer], worker.freeSlots > 0, let key = worker.pinned.first {
                workers[peer]?.pinned.removeFirst()
                guard entries[key]?.state == .queued else { continue }
                out.append(sendPinned(key, to: peer))
            }
            if workers[peer]?.pinned.isEmpty ?? true { workersWithPinned.remove(peer) }
        }
        return out
    }

    /// Sends ready tasks to workers with free slots, each to the worker with the most free slots (the
    /// least loaded; a retry passes over the worker it failed on while another has a free slot). O(1) per
    /// task sent (the `FreeSlotIndex`), whatever the number of workers.
    mutating func dispatch() -> [Outbound] {
        var out = workersWithPinned.isEmpty ? [] : dispatchPinned()
        while !freeSlotIndex.isEmpty, let key = readyQueue.dequeue() {
            guard let index = entries.index(forKey: key), entries.values[index].state == .queued else { continue }
            guard let peer = freeSlotIndex.next(avoiding: entries.values[index].avoid),
                  let workerIndex = workers.index(forKey: peer)
            else {
                // Not reached: the index holds registered workers only. The task keeps its place.
                readyQueue.enqueue(key, batch: entries.values[index].assignment.batchID,
                                   urgency: entries.values[index].priority, front: true)
                break
            }
            let batchable = workers.values[workerIndex].acceptsBatches
            entries.values[index].state = .running(worker: peer)
            entries.values[index].sentByReference = false
            if !batchable && !entries.values[index].mappedByID {
                // A minor-0 worker answers with the task ID only.
                entries.values[index].mappedByID = true
                keysByID[entries.values[index].assignment.taskID] = key
            }
            if batchable {
                let sequence = nextSequence()
                entries.values[index].assignment.sequence = sequence
                entries.values[index].heartbeatsUnseen = 0
            }
            occupy(key, on: peer)
            let assignment = chaining(entries.values[index].assignment, key: key, to: workerIndex)
            out.append(Outbound(peer: peer, message: .taskAssignment(assignment), batchable: batchable))
        }
        if !stealing.workers.isEmpty { out += askBackForIdleThreads() }
        return out
    }

    /// Sends a pinned task to its worker, which has a free slot.
    private mutating func sendPinned(_ key: TaskKey, to peer: PeerIdentity) -> Outbound {
        occupy(key, on: peer)
        entries[key]?.heartbeatsUnseen = 0
        return sendByReference(key, to: peer)
    }

    /// Sends a task to the worker that holds its input (in the slot kept for it), the input by reference.
    mutating func sendByReference(_ key: TaskKey, to peer: PeerIdentity) -> Outbound {
        entries[key]?.state = .running(worker: peer)
        entries[key]?.sentByReference = true
        if workers[peer] != nil {
            let sequence = nextSequence()
            entries[key]?.assignment.sequence = sequence
        }
        var assignment = entries[key]?.assignment ?? TaskAssignment(taskID: "", batchID: "", attempt: 0, kind: .unspecified)
        assignment.inputs = assignment.inputs.map {
            InjectedInput(fromTaskID: $0.fromTaskID, data: [], mediaType: $0.mediaType, onWorker: true)
        }
        localInputs += 1
        return Outbound(peer: peer, message: .taskAssignment(assignment), batchable: true)
    }
}
