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
            // The entry is read and changed in place (`inPlace`): the `Values` subscript's getter would copy
            // it whole, retaining and releasing each string of its assignment, for every field read.
            guard let index = entries.index(forKey: key) else { continue }
            let (isQueued, avoid) = inPlace(&entries.values[index]) { ($0.state == .queued, $0.avoid) }
            guard isQueued else { continue }
            guard let peer = freeSlotIndex.next(avoiding: avoid),
                let workerIndex = workers.index(forKey: peer)
            else {
                // Not reached: the index holds registered workers only. The task keeps its place.
                let (batch, urgency) = inPlace(&entries.values[index]) { ($0.assignment.batchID, $0.priority) }
                readyQueue.enqueue(key, batch: batch, urgency: urgency, front: true)
                break
            }
            let batchable = inPlace(&workers.values[workerIndex]) { $0.acceptsBatches }
            let sequence = batchable ? nextSequence() : nil
            let (assignment, mappedID) = inPlace(&entries.values[index]) { entry -> (TaskAssignment, String?) in
                entry.state = .running(worker: peer)
                entry.sentByReference = false
                var mappedID: String?
                if !batchable && !entry.mappedByID {
                    // A minor-0 worker answers with the task ID only.
                    entry.mappedByID = true
                    mappedID = entry.assignment.taskID
                }
                if let sequence {
                    entry.assignment.sequence = sequence
                    entry.heartbeatsUnseen = 0
                    entry.missingFromHeartbeat = false
                }
                return (entry.assignment, mappedID)
            }
            if let mappedID { keysByID[mappedID] = key }
            occupy(key, on: peer)
            out.append(
                Outbound(
                    peer: peer, message: .taskAssignment(chaining(assignment, key: key, to: workerIndex)),
                    batchable: batchable))
        }
        if !stealing.workers.isEmpty { out += askBackForIdleThreads() }
        return out
    }

    /// Sends a pinned task to its worker, which has a free slot.
    private mutating func sendPinned(_ key: TaskKey, to peer: PeerIdentity) -> Outbound {
        occupy(key, on: peer)
        entries[key]?.heartbeatsUnseen = 0
        entries[key]?.missingFromHeartbeat = false
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
        var assignment =
            entries[key]?.assignment ?? TaskAssignment(taskID: "", batchID: "", attempt: 0, kind: .unspecified)
        assignment.inputs = assignment.inputs.map {
            InjectedInput(fromTaskID: $0.fromTaskID, data: [], mediaType: $0.mediaType, onWorker: true)
        }
        localInputs += 1
        return Outbound(peer: peer, message: .taskAssignment(assignment), batchable: true)
    }
}

/// Runs `body` on `value` in place: `inPlace(&dictionary.values[index]) { $0.field }` reads a field of a
/// stored struct through the subscript's modify accessor, without copying the whole value out first.
@inline(__always)
func inPlace<Value, Result>(_ value: inout Value, _ body: (inout Value) -> Result) -> Result {
    body(&value)
}
