import Messaging
import Wire

/// The dispatcher's worker events: registration, heartbeats (and the assignments they show lost),
/// goodbyes, deaths.
extension Dispatcher {
    /// Registers a worker (again): it is given its slots as credit. `key` is the CurveZMQ key it
    /// registered with, which its later messages must carry (`WorkerBinding`, checked by the coordinator).
    mutating func register(
        _ hello: WorkerHello, peer: PeerIdentity, key: CurvePublicKey? = nil,
        now: ContinuousClock.Instant
    ) -> [Outbound] {
        if !hello.workerID.isEmpty, let problem = PeerInputRules.workerIDProblem(hello.workerID) {
            return [
                Outbound(
                    peer: peer,
                    message: .refusal(
                        Refusal(
                            code: .invalidRequest, reason: "\(problem): start the worker with another --worker-id")))
            ]
        }
        if let problem = PeerInputRules.workerSlotsProblem(hello.slots) {
            return [
                Outbound(
                    peer: peer,
                    message: .refusal(
                        Refusal(
                            code: .limit, reason: "\(problem): start the worker with a lower --slots")))
            ]
        }
        // A worker that says hello again has forgotten its tasks (it cancels them on welcome).
        removeWorker(peer)
        addWorker(
            WorkerRecord(
                peer: peer, workerID: hello.workerID.isEmpty ? peer.description : hello.workerID, key: key,
                hostname: hello.hostname, version: hello.version,
                slots: Int(max(1, hello.slots)), sequenceFloor: lastSequence, lastSeen: now,
                acceptsBatches: hello.acceptsBatches))
        workers[peer]?.acceptsChainedTasks = hello.acceptsChainedTasks
        noteGiveBack(hello, peer: peer)
        let interval = heartbeatInterval.components
        let milliseconds = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        let welcome = Outbound(
            peer: peer,
            message: .welcome(
                Welcome(
                    heartbeatIntervalMs: UInt32(clamping: milliseconds), coordinatorID: coordinatorID,
                    acceptsBatches: true,
                    maxMessageBytes: maxMessageBytes)))
        return [welcome] + dispatch()
    }

    /// Notes a heartbeat; a worker the dispatcher does not know is asked to register again.
    ///
    /// It also finds assignments lost on the way (a frame the worker could not decode): a task sent to
    /// this worker with a sequence up to the heartbeat's `lastSequence`, that the worker does not hold
    /// and whose result did not come first (results precede heartbeats on the connection), never
    /// arrived whole, once the next heartbeat says the same (a worker that answers the task right after
    /// a heartbeat, its result still on the way, is not taken for one that never got it; a lost
    /// assignment is found one heartbeat later); likewise a task the worker has not acknowledged after
    /// `heartbeatsBeforeLost` heartbeats, counting only heartbeats handled at least half an interval
    /// apart (a coordinator behind on its messages handles a backlog of heartbeats in a burst, and those
    /// may all predate the assignment: a slow-but-alive worker is not judged by the coordinator's own
    /// backlog). Its attempt is lost (`takeWorkerLosses()`): the coordinator fails
    /// it as `workerLost`, and its operation retries it as its batch allows. A cancelled task the worker no
    /// longer holds frees its slot. Returns how many assignments were found lost.
    /// A heartbeat that crossed the worker's `Welcome` (`WorkerRecord.sequenceFloor`) only counts as a
    /// sign of life.
    mutating func heartbeat(
        _ heartbeat: Heartbeat = Heartbeat(workerID: ""), from peer: PeerIdentity,
        now: ContinuousClock.Instant
    ) -> (lost: Int, out: [Outbound]) {
        guard let worker = workers[peer] else {
            return (0, [Outbound(peer: peer, message: .refusal(.unknownWorker))])
        }
        workers[peer]?.lastSeen = now
        workers[peer]?.lastHeartbeat = now
        workers[peer]?.droppedMessages = heartbeat.droppedMessages
        let spaced = worker.lastHeartbeat.map { now - $0 >= heartbeatInterval / 2 } ?? true
        // Only minor-1 workers are sent sequences and report what they hold.
        guard worker.acceptsBatches, !worker.running.isEmpty else { return (0, []) }
        // Sent before the worker heard this registration's Welcome (declared dead and registered again
        // while messages crossed): it reports the previous registration's sequences and tasks, and would
        // make this registration's first assignments look lost.
        if heartbeat.lastSequence > 0, heartbeat.lastSequence <= worker.sequenceFloor {
            crossedHeartbeats += 1
            return (0, [])
        }
        workers[peer]?.acknowledgedSequence = max(worker.acknowledgedSequence, heartbeat.lastSequence)
        let holding = Set(heartbeat.holding)
        var lost = 0
        var freed = false
        var givenBack: [TaskKey] = []
        for key in worker.running where !holding.contains(key) {
            if wasAskedBack(key, from: peer) {
                givenBack.append(key)  // its answer was lost: the worker no longer holds it (Dispatcher+Stealing)
                continue
            }
            // Read and counted in place: a thousand workers' heartbeats each go over the tasks they hold.
            guard let index = entries.index(forKey: key) else { continue }
            let sequence = entries.values[index].assignment.sequence
            guard sequence > 0 else { continue }
            if sequence > heartbeat.lastSequence {
                guard spaced else { continue }  // of a burst: it may have been sent before the assignment
                entries.values[index].heartbeatsUnseen += 1
                if entries.values[index].heartbeatsUnseen < Self.heartbeatsBeforeLost { continue }
            } else if !entries.values[index].missingFromHeartbeat {
                // Received and not held: answered, its result maybe sent just after this heartbeat. Lost
                // only if the next heartbeat (behind that result on the connection) says the same.
                entries.values[index].missingFromHeartbeat = true
                continue
            }
            let entry = entries.values[index]
            vacate(key, on: peer)
            freed = true
            switch entry.state {
            case .cancelling:
                removeEntry(key)  // nothing to confirm: the worker does not hold it
            case .running:
                loseAttempt(
                    key, entry, workerID: worker.workerID,
                    reason:
                        "never received its assignment whole (lost on the way, or unreadable: does it run another version of shiftwork?)",
                    cause: .assignmentLost)
                lost += 1
                lostDeliveries += 1
            case .queued:
                break
            }
        }
        if !givenBack.isEmpty {
            takeBackUnheld(givenBack, from: peer, now: now)
            freed = true
        }
        return (lost, freed ? dispatch() : [])
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
    /// the heartbeat timeout. Its tasks' attempts are lost (`takeWorkerLosses()`).
    mutating func workerUnreachable(_ peer: PeerIdentity) -> (wasWorker: Bool, out: [Outbound]) {
        guard workers[peer] != nil else { return (false, []) }
        removeWorker(peer, died: true)
        return (true, dispatch())
    }

    /// Declares workers silent for longer than the timeout dead; their tasks' attempts are lost
    /// (`takeWorkerLosses()`). Returns the IDs of the dead workers and the messages to send.
    mutating func expireWorkers(now: ContinuousClock.Instant) -> (dead: [String], out: [Outbound]) {
        expireReservations(now: now)
        stealing.expireReruns(now: now)
        let dead = workers.values.filter { now - $0.lastSeen > workerTimeout }
        for worker in dead { removeWorker(worker.peer, died: true) }
        return (dead.map(\.workerID), dispatch())
    }

    /// Forgets a worker. The attempts of the tasks it ran are lost (`WorkerLoss`): all of them when it
    /// `died`; when it left (a goodbye, or a hello again), those it had reported receiving (it started
    /// them), while those it never acknowledged are queued again, first in line, with a new attempt number
    /// and without counting an attempt (handed back before they started).
    mutating func removeWorker(_ peer: PeerIdentity, died: Bool = false) {
        guard let worker = dropWorker(peer) else { return }
        for key in worker.running where reservations[key]?.worker == peer { reservations[key] = nil }
        placements.forgetWorker(peer)
        for key in worker.pinned { loseInput(key, reason: "the worker that held it left") }
        for key in worker.running.sorted() {
            guard let entry = entries[key] else { continue }
            switch entry.state {
            case .running where entry.pinnedTo == peer:
                loseInput(key, reason: "the worker that held it left while running it")
            case .running:
                let sequence = entry.assignment.sequence
                if died {
                    loseAttempt(
                        key, entry, workerID: worker.workerID,
                        reason: "died while running it (silent, or its connection gone)")
                    noteUnanswered(key, entry, on: peer)  // a worker only silent may still answer it
                } else if sequence == 0 || sequence <= worker.acknowledgedSequence {
                    loseAttempt(key, entry, workerID: worker.workerID, reason: "left while running it")
                } else {
                    requeue(key, entry)
                }
            case .cancelling:
                removeEntry(key)  // its cancel can no longer be confirmed; nobody waits for it
                if died, entry.timedOut { noteUnanswered(key, entry, on: peer) }  // its result is still wanted
            case .queued:
                break
            }
        }
    }

    /// Queues a task again, first in line, with a new attempt number (a late result of the old one is stale),
    /// counted as a re-send for `reason`.
    mutating func requeue(_ key: TaskKey, _ entry: Entry, reason: TaskResends.Reason = .handedBack) {
        var entry = entry
        entry.assignment.attempt += 1
        entry.state = .queued
        entry.missingFromHeartbeat = false
        entry.timedOut = false
        entry.crossedCancel = false
        entries[key] = entry
        resends.record(reason)
        if let holder = entry.pinnedTo {
            workers[holder]?.pinned.insert(key, at: 0)
            workersWithPinned.insert(holder)
        } else {
            readyQueue.enqueue(key, batch: entry.assignment.batchID, urgency: entry.priority, front: true)
        }
    }
}
