import Wire

/// The dispatcher's worker events: registration, heartbeats (and the assignments they show lost),
/// goodbyes, deaths.
extension Dispatcher {
    /// Registers a worker (again): it is given its slots as credit.
    mutating func register(_ hello: WorkerHello, peer: PeerIdentity, now: ContinuousClock.Instant) -> [Outbound] {
        if !hello.workerID.isEmpty, let problem = PeerInputRules.workerIDProblem(hello.workerID) {
            return [Outbound(peer: peer, message: .refusal(Refusal(
                code: .invalidRequest, reason: "\(problem): start the worker with another --worker-id")))]
        }
        // A worker that says hello again has forgotten its tasks (it cancels them on welcome).
        removeWorker(peer)
        addWorker(WorkerRecord(
            peer: peer, workerID: hello.workerID.isEmpty ? peer.description : hello.workerID,
            hostname: hello.hostname, version: hello.version,
            slots: Int(max(1, hello.slots)), sequenceFloor: lastSequence, lastSeen: now, acceptsBatches: hello.acceptsBatches))
        let interval = heartbeatInterval.components
        let milliseconds = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        let welcome = Outbound(peer: peer, message: .welcome(Welcome(
            heartbeatIntervalMs: UInt32(clamping: milliseconds), coordinatorID: coordinatorID, acceptsBatches: true,
            maxMessageBytes: maxMessageBytes)))
        return [welcome] + dispatch()
    }

    /// Notes a heartbeat; a worker the dispatcher does not know is asked to register again.
    ///
    /// It also finds assignments lost on the way (a frame the worker could not decode): a task sent to
    /// this worker with a sequence up to the heartbeat's `lastSequence`, that the worker does not hold
    /// and whose result did not come first (results precede heartbeats on the connection), never
    /// arrived whole; likewise a task the worker has not acknowledged after `heartbeatsBeforeLost`
    /// heartbeats. It is queued again with a new attempt, or fails after `maxLostDeliveries` (returned,
    /// to deliver to whoever waits for it). A cancelled task the worker no longer holds frees its slot.
    /// A heartbeat that crossed the worker's `Welcome` (`WorkerRecord.sequenceFloor`) only counts as a
    /// sign of life.
    mutating func heartbeat(_ heartbeat: Heartbeat = Heartbeat(workerID: ""), from peer: PeerIdentity,
                            now: ContinuousClock.Instant) -> (lost: [TaskResult], out: [Outbound]) {
        guard let worker = workers[peer] else {
            return ([], [Outbound(peer: peer, message: .refusal(.unknownWorker))])
        }
        workers[peer]?.lastSeen = now
        workers[peer]?.droppedMessages = heartbeat.droppedMessages
        // Only minor-1 workers are sent sequences and report what they hold.
        guard worker.acceptsBatches, !worker.running.isEmpty else { return ([], []) }
        // Sent before the worker heard this registration's Welcome (declared dead and registered again
        // while messages crossed): it reports the previous registration's sequences and tasks, and would
        // make this registration's first assignments look lost.
        if heartbeat.lastSequence > 0, heartbeat.lastSequence <= worker.sequenceFloor {
            crossedHeartbeats += 1
            return ([], [])
        }
        let holding = Set(heartbeat.holding)
        var failed: [TaskResult] = []
        var freed = false
        for key in worker.running where !holding.contains(key) {
            guard var entry = entries[key] else { continue }
            let sequence = entry.assignment.sequence
            guard sequence > 0 else { continue }
            if sequence > heartbeat.lastSequence {
                entry.heartbeatsUnseen += 1
                entries[key] = entry
                if entry.heartbeatsUnseen < Self.heartbeatsBeforeLost { continue }
            }
            vacate(key, on: peer)
            freed = true
            switch entry.state {
            case .cancelling:
                removeEntry(key)  // nothing to confirm: the worker does not hold it
            case .running:
                entry.lostDeliveries += 1
                entry.heartbeatsUnseen = 0
                if entry.lostDeliveries >= Self.maxLostDeliveries {
                    failed.append(giveUp(key, entry, message:
                        "\(entry.assignment.source): its assignment reached \(Self.maxLostDeliveries) workers unreadable "
                        + "(do they run another version of shiftwork?); it fails instead of being sent again"))
                    continue
                }
                requeue(key, entry)
                lostDeliveries += 1
            case .queued:
                break
            }
        }
        return (failed, freed ? dispatch() : [])
    }

    /// A worker says goodbye. Draining, it keeps its tasks and gets no new ones; leaving, whatever it
    /// still holds goes back to the queue.
    mutating func workerLeft(_ peer: PeerIdentity, draining: Bool) -> [Outbound] {
        if draining {
            setDraining(peer)
            // It is sent nothing new: tasks waiting for its inputs run their producers again elsewhere.
            for key in workers[peer]?.pinned ?? [] { loseInput(key, reason: "the worker that held it is draining") }
            workers[peer]?.pinned = []
            return []
        }
        removeWorker(peer)
        return dispatch()
    }

    /// A worker the socket can no longer reach (its connection is gone): dead now, without waiting for
    /// the heartbeat timeout. Returns the failures of tasks that have now killed too many workers.
    mutating func workerUnreachable(_ peer: PeerIdentity) -> (wasWorker: Bool, poisoned: [TaskResult], out: [Outbound]) {
        guard workers[peer] != nil else { return (false, [], []) }
        let poisoned = removeWorker(peer, died: true)
        return (true, poisoned, dispatch())
    }

    /// Declares workers silent for longer than the timeout dead and requeues their tasks. Returns the
    /// IDs of the dead workers, the failures of tasks that have now killed `maxWorkerDeaths` workers
    /// (to deliver to whoever waits for them), and the messages to send.
    mutating func expireWorkers(now: ContinuousClock.Instant) -> (dead: [String], poisoned: [TaskResult], out: [Outbound]) {
        expireReservations(now: now)
        let dead = workers.values.filter { now - $0.lastSeen > workerTimeout }
        var poisoned: [TaskResult] = []
        for worker in dead { poisoned += removeWorker(worker.peer, died: true) }
        return (dead.map(\.workerID), poisoned, dispatch())
    }

    /// Forgets a worker and queues its running tasks again, first in line, with a new attempt number.
    /// When the worker `died`, a task that has now been on `maxWorkerDeaths` dying workers fails instead;
    /// its failure is returned.
    @discardableResult
    mutating func removeWorker(_ peer: PeerIdentity, died: Bool = false) -> [TaskResult] {
        guard let worker = dropWorker(peer) else { return [] }
        for key in worker.running where reservations[key]?.worker == peer { reservations[key] = nil }
        placements.forgetWorker(peer)
        for key in worker.pinned { loseInput(key, reason: "the worker that held it left") }
        var poisoned: [TaskResult] = []
        for key in worker.running.sorted() {
            guard var entry = entries[key] else { continue }
            switch entry.state {
            case .running where entry.pinnedTo == peer:
                loseInput(key, reason: "the worker that held it left while running it")
            case .running:
                if died {
                    entry.workerDeaths += 1
                    entry.lastDeadWorker = worker.workerID
                    if entry.workerDeaths >= maxWorkerDeaths {
                        poisoned.append(giveUp(key, entry, message:
                            "\(entry.assignment.source): its \(entry.assignment.kind == .download ? "download" : "tilt-shift") "
                            + "was running on \(entry.workerDeaths) workers that died (the last: \(entry.lastDeadWorker)); "
                            + "it fails now instead of killing more. Check this input, and the workers' logs."))
                        continue
                    }
                }
                requeue(key, entry)
            case .cancelling:
                removeEntry(key)  // its cancel can no longer be confirmed; nobody waits for it
            case .queued:
                break
            }
        }
        return poisoned
    }

    /// Queues a task again, first in line, with a new attempt number (a late result of the old one is stale).
    mutating func requeue(_ key: TaskKey, _ entry: Entry) {
        var entry = entry
        entry.assignment.attempt += 1
        entry.state = .queued
        entries[key] = entry
        if let holder = entry.pinnedTo {
            workers[holder]?.pinned.insert(key, at: 0)
            workersWithPinned.insert(holder)
        } else {
            readyQueue.enqueue(key, batch: entry.assignment.batchID, urgency: entry.priority, front: true)
        }
    }

    /// Forgets a task that will not be tried again and returns its failure, for whoever waits for it.
    mutating func giveUp(_ key: TaskKey, _ entry: Entry, message: String) -> TaskResult {
        removeEntry(key)
        failedTasks += 1
        return TaskResult(taskID: entry.assignment.taskID, attempt: entry.assignment.attempt,
                          outcome: .failure(TaskFailure(code: .internal, message: message)), taskKey: key)
    }
}
