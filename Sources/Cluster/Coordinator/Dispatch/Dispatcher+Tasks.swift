import Wire

/// The dispatcher's task events: tasks queued, answered, cancelled, and the slots kept for locality.
extension Dispatcher {
    /// Queues a task for the next free slot. A task whose input a worker holds (the slot kept there when
    /// its download succeeded) goes straight to that worker, with its input as a reference. For a
    /// download, `dependentKey` names the tilt-shift to keep a slot for.
    /// `avoiding` (a retry) names a worker to pass over while another has a free slot. `followOn` (a
    /// download's tilt-shift) goes with it to a worker that accepts chained tasks (`Dispatcher+Chained`);
    /// a follow-on adopted so is not sent again when its own operation asks for it.
    mutating func enqueue(
        _ assignment: TaskAssignment, priority: Int = 0, dependentKey: TaskKey = 0,
        avoiding: PeerIdentity? = nil, followOn: TaskAssignment? = nil
    ) -> [Outbound] {
        var assignment = assignment
        var mapped = false
        if assignment.taskKey == 0 {
            nextLocalKey += 1
            assignment.taskKey = nextLocalKey
            keysByID[assignment.taskID] = nextLocalKey
            mapped = true
        }
        let key = assignment.taskKey
        var avoiding = avoiding
        if dependentKey != 0, !stealing.rerunsDue.isEmpty, let victim = noteRerun(of: dependentKey) {
            avoiding = avoiding ?? victim
        }
        if !chained.isEmpty, chained.requested(key) { return [] }  // it runs on its worker already
        if let followOn { chained.offer(followOn, with: key) }
        entries[key] = Entry(
            assignment: assignment, state: .queued, priority: priority, mappedByID: mapped,
            dependentKey: dependentKey, avoid: avoiding)
        let holder = placements.take(key)
        if let holder { entries[key]?.pinnedTo = holder }
        if let reservation = reservations.removeValue(forKey: key) {
            if workers[reservation.worker]?.running.contains(key) == true {
                return [sendByReference(key, to: reservation.worker)]
            }
        }
        if let holder {
            guard let worker = workers[holder], !worker.draining else {
                loseInput(key, reason: "the worker that held it left")
                return []
            }
            workers[holder]?.pinned.append(key)
            workersWithPinned.insert(holder)
            return dispatch()
        }
        if assignment.inputs.contains(where: \.onWorker) {
            loseInput(key, reason: "no worker holds it any more")
            return []
        }
        readyQueue.enqueue(key, batch: assignment.batchID, urgency: priority)
        return dispatch()
    }

    /// Fails a task whose input stayed on a worker that no longer has it: `inputMissing`, delivered by the
    /// coordinator (`takeLostInputs()`), after which its producer runs again (`Lineage`).
    mutating func loseInput(_ key: TaskKey, reason: String, givenBack: Bool = false) {
        guard let entry = entries[key] else { return }
        removeEntry(key)
        if !givenBack { inputsLost += 1 }
        lostInputs.append(
            TaskResult(
                taskID: entry.assignment.taskID, attempt: entry.assignment.attempt,
                outcome: .failure(
                    TaskFailure(
                        code: .inputMissing,
                        message: "\(entry.assignment.source): its downloaded image is gone: \(reason)")),
                taskKey: key))
    }

    /// The failures of tasks whose input was lost since the last call, for whoever waits for them.
    /// The attempts lost with their workers since the last call, for whoever waits for them.
    mutating func takeWorkerLosses() -> [WorkerLoss] {
        guard !workerLosses.isEmpty else { return [] }
        defer { workerLosses = [] }
        return workerLosses
    }

    /// Lets go of a task whose attempt was lost with `workerID` (or only its assignment: `cause`), and keeps
    /// the loss for the coordinator.
    mutating func loseAttempt(
        _ key: TaskKey, _ entry: Entry, workerID: String, reason: String,
        cause: TaskResends.Reason = .workerLost
    ) {
        removeEntry(key)
        workerLosses.append(WorkerLoss(entry.assignment, key: key, workerID: workerID, reason: reason, cause: cause))
    }

    mutating func takeLostInputs() -> [TaskResult] {
        guard !lostInputs.isEmpty else { return [] }
        defer { lostInputs = [] }
        return chained.isEmpty ? lostInputs : lostInputs.compactMap { chained.hold($0, from: nil) }
    }

    /// Gives back the slot kept for `key` (its dependent will not run: cancelled, or it never started).
    mutating func release(_ key: TaskKey) -> [Outbound] {
        placements.forget(key)
        if !lateAttempts.isEmpty { lateAttempts.forget(key) }
        if !chained.isEmpty { chained.forget(key) }
        guard let reservation = reservations.removeValue(forKey: key) else { return [] }
        vacate(key, on: reservation.worker)
        return dispatch()
    }

    /// Gives back slots kept for longer than `reservationTimeout`.
    mutating func expireReservations(now: ContinuousClock.Instant) {
        for (key, reservation) in reservations where now - reservation.since > Self.reservationTimeout {
            reservations[key] = nil
            vacate(key, on: reservation.worker)
        }
    }

    /// Forgets a task (and its ID mapping, if it has one).
    mutating func removeEntry(_ key: TaskKey) {
        chained.forgetOffer(key)
        if !lateAttempts.isEmpty { lateAttempts.forget(key) }
        if let entry = entries.removeValue(forKey: key), entry.mappedByID {
            keysByID[entry.assignment.taskID] = nil
        }
    }

    /// The key of the task with this ID: from `keysByID`, else by a scan (only for tasks neither made up
    /// here nor sent to a minor-0 worker; the coordinator itself always has the key).
    private func key(of taskID: String) -> TaskKey? {
        if let key = keysByID[taskID] { return key }
        return entries.first { $0.value.assignment.taskID == taskID }?.key
    }

    /// Handles a worker's result. Returns the result, with its `taskKey` set, when it answers the current
    /// attempt of a task that is still wanted, or is a success that still wins (`Dispatcher+LateResults`: one
    /// that crossed its timeout's cancel, or of an attempt let go unanswered); `nil` when it is a cancel's
    /// confirmation, or stale (and counted in `staleResults`). The slot of the attempt it answers is freed.
    mutating func complete(
        _ result: TaskResult, from peer: PeerIdentity, now: ContinuousClock.Instant
    ) -> (TaskResult?, [Outbound]) {
        let workerIndex = workers.index(forKey: peer)
        if let workerIndex { workers.values[workerIndex].lastSeen = now }
        // Found by the key it echoes (minor 1), else by its ID. Only the answer to the current attempt,
        // from the worker that holds it, frees a slot.
        // What this needs of the entry, read in place (`inPlace`): a copy of the whole entry would retain
        // and release every string of its assignment.
        guard let key = result.taskKey != 0 ? result.taskKey : keysByID[result.taskID],
            let index = entries.index(forKey: key),
            let entry = inPlace(
                &entries.values[index],
                { entry -> Answered? in
                    guard entry.assignment.attempt == result.attempt, entry.assignment.taskID == result.taskID else {
                        return nil
                    }
                    return Answered(
                        state: entry.state, sequence: entry.assignment.sequence, kind: entry.assignment.kind,
                        sentByReference: entry.sentByReference, isPinned: entry.pinnedTo != nil,
                        dependentKey: entry.dependentKey, timedOut: entry.timedOut, crossedCancel: entry.crossedCancel)
                })
        else {
            // Not the current attempt: the success of an attempt let go unanswered still wins while the task
            // has no result (`Dispatcher+LateResults`); anything else is stale.
            if let used = useLateResult(result, from: peer, now: now) { return used }
            staleResults += 1
            return (nil, [])
        }
        let isOutput = if case .output = result.outcome { true } else { false }
        switch entry.state {
        case .running(let worker) where worker == peer,
            .cancelling(let worker) where worker == peer && entry.timedOut && isOutput:
            // A success that crossed its timeout's cancel is the task's result all the same: first valid
            // result wins (`Dispatcher+LateResults`).
            let late = entry.state != .running(worker: peer)
            if let workerIndex, entry.sequence > workers.values[workerIndex].acknowledgedSequence {
                // Assignments arrive in order: the worker received every one up to this.
                workers.values[workerIndex].acknowledgedSequence = entry.sequence
            }
            if entry.crossedCancel, case .failure(let failure) = result.outcome, failure.code == .cancelled {
                // Its download's timeout cancel reached it on its worker: run it there again.
                vacate(key, on: peer)
                resendCrossedFollowOn(key)
                return (nil, dispatch())
            }
            if entry.sentByReference, !entry.isPinned, case .failure(let failure) = result.outcome,
                failure.code == .inputMissing
            {
                // The worker no longer had the input: send the bytes, to whichever worker is free.
                localInputsMissed += 1
                resends.record(.inputMissing)
                vacate(key, on: peer)
                let (batch, urgency) = inPlace(&entries.values[index]) { entry -> (String, Int) in
                    entry.assignment.attempt += 1
                    entry.state = .queued
                    entry.sentByReference = false
                    return (entry.assignment.batchID, entry.priority)
                }
                readyQueue.enqueue(key, batch: batch, urgency: urgency, front: true)
                return (nil, dispatch())
            }
            let adopted =
                entry.dependentKey != 0
                && adoptFollowOn(afterDownload: key, result: result, from: peer, crossedCancel: late)
            removeEntry(key)
            throughput.record(at: now)
            let succeeded = if case .output = result.outcome { true } else { false }
            if case .output(let output) = result.outcome {
                countReceived(output, of: entry.kind)
                if entry.dependentKey != 0, output.heldOnWorker, !adopted {
                    placements.record(entry.dependentKey, on: peer)
                }
            }
            if let workerIndex {
                if succeeded {
                    workers.values[workerIndex].completed += 1
                } else {
                    workers.values[workerIndex].failed += 1
                }
                let keepsSlot =
                    if succeeded, entry.dependentKey != 0, case .output(let output) = result.outcome,
                        output.heldOnWorker || !output.data.isEmpty, output.mediaType.hasPrefix("image/"),
                        workers.values[workerIndex].acceptsBatches, !workers.values[workerIndex].draining, !adopted
                    { true } else { false }
                vacate(key, on: peer)
                if keepsSlot {
                    // Locality: the slot stays taken, kept for the tilt-shift of these bytes.
                    occupy(entry.dependentKey, on: peer)
                    reservations[entry.dependentKey] = Reservation(worker: peer, since: now)
                }
            }
            if succeeded { completedTasks += 1 } else { failedTasks += 1 }
            if late { lateResultsUsed += 1 }
            var delivered = result
            delivered.taskKey = key
            // A chained follow-on's result before its operation asked for it waits for that (in order).
            return (chained.isEmpty ? delivered : chained.hold(delivered, from: peer), dispatch())
        case .cancelling(let worker) where worker == peer:
            // The worker confirmed (or finished anyway): nobody waits for it any more.
            vacate(key, on: peer)
            removeEntry(key)
            return (nil, dispatch())
        default:
            staleResults += 1
            return (nil, [])
        }
    }

    /// Counts the bytes of an output that reached the coordinator, downloads and the rest apart.
    mutating func countReceived(_ output: TaskOutput, of kind: TaskKind) {
        if kind == .download {
            downloadBytesReceived += UInt64(output.data.count)
        } else {
            outputBytesReceived += UInt64(output.data.count)
        }
    }

    /// Withdraws a task: a queued one is dropped at once, a running one is cancelled on its worker with
    /// `CancelTask{task_key}` (its slot stays taken until the worker confirms). A task the dispatcher does
    /// not hold gives back the slot kept for it, if any.
    mutating func cancel(key: TaskKey, reason: String) -> [Outbound] {
        if !chained.isEmpty { chained.forget(key) }
        guard let entry = entries[key] else { return release(key) }
        switch entry.state {
        case .queued:
            withdrawQueued(key, entry)
            return []
        case .running(let worker):
            entries[key]?.state = .cancelling(worker: worker)
            return [
                Outbound(
                    peer: worker,
                    message: .cancelTask(
                        CancelTask(
                            taskID: entry.assignment.taskID, reason: reason, taskKey: key)))
            ]
        case .cancelling:
            entries[key]?.timedOut = false  // timing out, now withdrawn: its success is nobody's either
            return []
        }
    }

    /// Drops a queued task: from the queue, or from the worker it waits for (pinned).
    mutating func withdrawQueued(_ key: TaskKey, _ entry: Entry) {
        removeEntry(key)
        if let holder = entry.pinnedTo {
            workers[holder]?.pinned.removeAll { $0 == key }
        } else {
            readyQueue.remove(key)
        }
    }

    /// Describes a batch before its tasks come: whose it is and its priority, for the fair share.
    mutating func share(batch batchID: String, as shareClass: ShareClass) {
        readyQueue.register(batch: batchID, as: shareClass)
    }

    /// Forgets a finished batch's description, and the attempts of its tasks let go unanswered.
    mutating func forgetShare(of batchID: String) {
        readyQueue.unregister(batch: batchID)
        if !lateAttempts.isEmpty { lateAttempts.forget(batch: batchID) }
    }

    /// Tasks finished per second over the last 10 seconds.
    func tasksPerSecond(now: ContinuousClock.Instant) -> Double { throughput.rate(at: now) }

    /// Where a task is, or `nil` when the dispatcher does not hold it.
    func state(of key: TaskKey) -> EntryState? { entries[key]?.state }

    /// Where the task with this ID is, or `nil` when the dispatcher does not hold it.
    func state(of taskID: String) -> EntryState? { key(of: taskID).flatMap { entries[$0]?.state } }
}
