import Wire

/// Chained tasks: a download sent with its tilt-shift (`TaskAssignment.followOn`) to a worker that accepts
/// them, and the tilt-shift adopted as running there when the download's image stayed on that worker. The
/// bookkeeping is `ChainedFollowOns`'; this applies it to the dispatcher's entries and slots.
extension Dispatcher {
    /// `assignment` (download `key`, about to go to the worker at `workerIndex`) with its follow-on attached
    /// when the worker accepts chained tasks; without one otherwise.
    mutating func chaining(
        _ assignment: TaskAssignment, key: TaskKey, to workerIndex: Dictionary<PeerIdentity, WorkerRecord>.Index
    ) -> TaskAssignment {
        guard !chained.isEmpty || assignment.followOn != nil else { return assignment }
        let worker = workers.values[workerIndex]
        var sent = assignment
        sent.followOn = chained.attach(
            key, to: worker.peer, accepted: worker.acceptsChainedTasks && worker.acceptsBatches)
        return sent
    }

    /// Download `key` answered from `peer` with `result` (its entry is still held): when it carried a
    /// follow-on there and its image stayed on `peer`, the follow-on is adopted: it runs there (the worker
    /// started it), takes the download's slot, with its input pinned there (its loss re-runs the download,
    /// `Lineage`), and no assignment is sent for it. Returns whether it was.
    /// `crossedCancel`: the download's result crossed its timeout's cancel, which reaches the follow-on there
    /// (`Entry.crossedCancel`).
    mutating func adoptFollowOn(
        afterDownload key: TaskKey, result: TaskResult, from peer: PeerIdentity,
        crossedCancel: Bool = false
    ) -> Bool {
        guard !chained.isEmpty, let followOn = chained.takeAttached(key, from: peer, result: result),
            let download = entries[key], workers[peer] != nil
        else { return false }
        var assignment = followOn
        assignment.inputs = [InjectedInput(fromTaskID: download.assignment.taskID, data: [], onWorker: true)]
        assignment.sequence = download.assignment.sequence  // received with the download
        var entry = Entry(assignment: assignment, state: .running(worker: peer), priority: 1)
        entry.sentByReference = true
        entry.pinnedTo = peer
        entry.crossedCancel = crossedCancel
        placements.forget(followOn.taskKey)
        entries[followOn.taskKey] = entry
        occupy(followOn.taskKey, on: peer)
        chained.adopt(assignment, on: peer)
        localInputs += 1
        return true
    }

    /// The results of adopted follow-ons held until their operations asked, with their workers, in order.
    mutating func takeChainedResults() -> [(result: TaskResult, worker: PeerIdentity?)] { chained.takeReady() }

    /// The follow-ons adopted since the last call, with their workers: their task timeouts start now.
    mutating func takeAdoptedFollowOns() -> [(assignment: TaskAssignment, worker: PeerIdentity)] {
        chained.takeAdopted()
    }
}

extension ChainedFollowOns {
    /// Nothing offered, nothing adopted: the common case of a dispatcher without chained work costs a check.
    var isEmpty: Bool { count.offers == 0 && count.unrequested == 0 }
}
