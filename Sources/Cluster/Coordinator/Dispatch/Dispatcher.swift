import Wire

/// The coordinator's number for a task (`TaskAssignment.taskKey`): the dispatcher's maps are keyed by
/// it, not by the task ID string, and workers are told which task to cancel by it. Handed out by the
/// `BatchRegistry`: unique for one coordinator, never 0.
typealias TaskKey = UInt64

/// The coordinator's dispatch state and rules, free of I/O: which worker holds which task, which tasks
/// wait for a slot, and who is alive. Each event goes in; the messages to send come out.
///
/// Rules:
/// - Credit-based flow control: a worker holds at most `slots` tasks. A slot is freed only by the
///   worker's answer for the task that held it (a result, or its confirmation of a cancel).
/// - A worker silent for longer than `workerTimeout` is dead. Its tasks' attempts are lost
///   (`WorkerLoss`, taken with `takeWorkerLosses()`): the coordinator fails them as `workerLost`, and
///   their operations retry them (new attempts) as the batch's `--retries` allow; a late result from
///   the old attempt is ignored. So with a worker that leaves while running a task, or an assignment
///   that never reached its worker. A task a leaving worker never reported receiving is queued again,
///   first in line, without counting an attempt.
/// - Which ready task goes next is the `FairShareQueue`'s: clients and batches take turns, weighted by
///   their batches' priorities; within a batch, urgent tasks first, then in the order they became ready.
struct Dispatcher {
    /// Where a task is in its life on the cluster.
    enum EntryState: Equatable {
        /// Waiting for a free slot.
        case queued
        /// Sent to a worker; its result is awaited.
        case running(worker: PeerIdentity)
        /// Cancelled while running: the worker was told, and its slot stays taken until it confirms.
        case cancelling(worker: PeerIdentity)
    }

    struct Entry {
        var assignment: TaskAssignment
        var state: EntryState
        let priority: Int
        /// Its task ID is in `keysByID` (see there).
        var mappedByID = false
        /// Heartbeats from its worker since it was sent that did not show the worker had received it yet.
        var heartbeatsUnseen = 0
        /// For a download: the key of the tilt-shift that consumes its output (locality); 0: none.
        var dependentKey: TaskKey = 0
        /// Sent with its input as a reference to the worker's cache (`InjectedInput.onWorker`).
        var sentByReference = false
        /// The only worker that may run it: its input stayed there (`InputPlacements`).
        var pinnedTo: PeerIdentity?
        /// A retry: the worker where its last attempt failed, passed over while another has a free slot.
        var avoid: PeerIdentity?
    }

    /// A worker slot kept, after a download succeeded there, for the tilt-shift that will use its bytes.
    struct Reservation {
        let worker: PeerIdentity
        let since: ContinuousClock.Instant
    }

    /// Heartbeats after which an assignment its worker still has not reported receiving counts as lost
    /// (the worker heard nothing newer since: the last assignment it was sent did not arrive whole).
    static let heartbeatsBeforeLost = 5

    let heartbeatInterval: Duration
    let workerTimeout: Duration
    private(set) var workers: [PeerIdentity: WorkerRecord] = [:]
    private(set) var entries: [TaskKey: Entry] = [:]
    private var readyQueue: FairShareQueue
    /// Keys by task ID, only for the tasks that need it: enqueued without a key (one is made up here), or
    /// sent to a worker of minor 0, whose results carry no key.
    private var keysByID: [String: TaskKey] = [:]
    /// Keys made up for tasks enqueued without one: far above the keys `RemoteTaskOperation` hands out.
    private var nextLocalKey: TaskKey = 1 << 63

    private(set) var completedTasks: UInt64 = 0
    private(set) var failedTasks: UInt64 = 0
    /// Results of attempts that are no longer current (the task was requeued, cancelled or finished).
    private(set) var staleResults: UInt64 = 0
    /// Assignments found lost on the way to a worker (their attempts failed as `workerLost`).
    private(set) var lostDeliveries: UInt64 = 0
    /// Slots kept for dependents, by the dependent's key.
    private(set) var reservations: [TaskKey: Reservation] = [:]
    /// Tasks sent to the worker that holds their input, which therefore did not travel (locality).
    private(set) var localInputs: UInt64 = 0
    /// Of those, tasks whose input the worker no longer had, sent again with the bytes.
    private(set) var localInputsMissed: UInt64 = 0
    /// Which worker holds the input of which dependent (downloads that stayed where they landed).
    private(set) var placements = InputPlacements()
    /// Workers with tasks pinned to them (`WorkerRecord.pinned`) waiting for a slot.
    private var workersWithPinned: Set<PeerIdentity> = []
    /// Failures (`inputMissing`) of tasks whose input is gone with its worker, for the coordinator to
    /// deliver (`takeLostInputs()`); their producers are run again (`Lineage`).
    private var lostInputs: [TaskResult] = []
    /// Task attempts lost with their workers, for the coordinator to fail (`takeWorkerLosses()`).
    private var workerLosses: [WorkerLoss] = []
    /// Tasks whose input was lost that way.
    private(set) var inputsLost: UInt64 = 0
    /// Bytes of task outputs that reached the coordinator, downloads and the rest apart: with downloads
    /// kept on workers and a sink, both stay near 0 (a manifest's list and no-op results only).
    private(set) var downloadBytesReceived: UInt64 = 0
    private(set) var outputBytesReceived: UInt64 = 0
    /// A reservation not taken up within this long is given back (its dependent never came).
    static let reservationTimeout: Duration = .seconds(30)
    /// Finished tasks per second, for the throughput in status.
    private var throughput = ThroughputMeter()

    /// Sent in `Welcome`, so that a worker's log says which coordinator (instance) it joined.
    let coordinatorID: String

    /// Sent in `Welcome`: the largest message the coordinator accepts (0: not said).
    let maxMessageBytes: UInt64

    init(heartbeatInterval: Duration, workerTimeout: Duration, coordinatorID: String = "",
         maxMessageBytes: UInt64 = 0, scheduling: SchedulingPolicy = .fairShare) {
        self.readyQueue = FairShareQueue(policy: scheduling)
        self.coordinatorID = coordinatorID
        self.maxMessageBytes = maxMessageBytes
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
    }

    var queuedTaskCount: Int { readyQueue.count }
    var runningTaskCount: Int { workers.values.reduce(0) { $0 + $1.running.count } }

    // MARK: Tasks

    /// Queues a task for the next free slot. A task whose input a worker holds (the slot kept there when
    /// its download succeeded) goes straight to that worker, with its input as a reference. For a
    /// download, `dependentKey` names the tilt-shift to keep a slot for.
    /// `avoiding` (a retry) names a worker to pass over while another has a free slot.
    mutating func enqueue(_ assignment: TaskAssignment, priority: Int = 0, dependentKey: TaskKey = 0,
                          avoiding: PeerIdentity? = nil) -> [Outbound] {
        var assignment = assignment
        var mapped = false
        if assignment.taskKey == 0 {
            nextLocalKey += 1
            assignment.taskKey = nextLocalKey
            keysByID[assignment.taskID] = nextLocalKey
            mapped = true
        }
        let key = assignment.taskKey
        entries[key] = Entry(assignment: assignment, state: .queued, priority: priority, mappedByID: mapped,
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
    private mutating func loseInput(_ key: TaskKey, reason: String) {
        guard let entry = entries[key] else { return }
        removeEntry(key)
        inputsLost += 1
        lostInputs.append(TaskResult(
            taskID: entry.assignment.taskID, attempt: entry.assignment.attempt,
            outcome: .failure(TaskFailure(code: .inputMissing, message: "\(entry.assignment.source): its downloaded image is gone: \(reason)")),
            taskKey: key))
    }

    /// The failures of tasks whose input was lost since the last call, for whoever waits for them.
    mutating func takeLostInputs() -> [TaskResult] {
        guard !lostInputs.isEmpty else { return [] }
        defer { lostInputs = [] }
        return lostInputs
    }

    /// The attempts lost with their workers since the last call, for whoever waits for them.
    mutating func takeWorkerLosses() -> [WorkerLoss] {
        guard !workerLosses.isEmpty else { return [] }
        defer { workerLosses = [] }
        return workerLosses
    }

    /// Lets go of a task whose attempt was lost with `workerID`, and keeps the loss for the coordinator.
    private mutating func loseAttempt(_ key: TaskKey, _ entry: Entry, workerID: String, reason: String) {
        removeEntry(key)
        workerLosses.append(WorkerLoss(entry.assignment, key: key, workerID: workerID, reason: reason))
    }

    /// Sends a pinned task to its worker, which has a free slot.
    private mutating func sendPinned(_ key: TaskKey, to peer: PeerIdentity) -> Outbound {
        workers[peer]?.running.insert(key)
        entries[key]?.heartbeatsUnseen = 0
        return sendByReference(key, to: peer)
    }

    /// Sends a task to the worker that holds its input (in the slot kept for it), the input by reference.
    private mutating func sendByReference(_ key: TaskKey, to peer: PeerIdentity) -> Outbound {
        entries[key]?.state = .running(worker: peer)
        entries[key]?.sentByReference = true
        if let sent = workers[peer]?.assignmentsSent {
            workers[peer]?.assignmentsSent = sent + 1
            entries[key]?.assignment.sequence = sent + 1
        }
        var assignment = entries[key]?.assignment ?? TaskAssignment(taskID: "", batchID: "", attempt: 0, kind: .unspecified)
        assignment.inputs = assignment.inputs.map {
            InjectedInput(fromTaskID: $0.fromTaskID, data: [], mediaType: $0.mediaType, onWorker: true)
        }
        localInputs += 1
        return Outbound(peer: peer, message: .taskAssignment(assignment), batchable: true)
    }

    /// Gives back the slot kept for `key` (its dependent will not run: cancelled, or it never started).
    mutating func release(_ key: TaskKey) -> [Outbound] {
        placements.forget(key)
        guard let reservation = reservations.removeValue(forKey: key) else { return [] }
        workers[reservation.worker]?.running.remove(key)
        return dispatch()
    }

    /// Gives back slots kept for longer than `reservationTimeout`.
    private mutating func expireReservations(now: ContinuousClock.Instant) {
        for (key, reservation) in reservations where now - reservation.since > Self.reservationTimeout {
            reservations[key] = nil
            workers[reservation.worker]?.running.remove(key)
        }
    }

    /// Forgets a task (and its ID mapping, if it has one).
    private mutating func removeEntry(_ key: TaskKey) {
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
    /// attempt of a task that is still wanted, `nil` when it is stale (and counted); either way the
    /// worker's slot is freed.
    mutating func complete(_ result: TaskResult, from peer: PeerIdentity, now: ContinuousClock.Instant) -> (TaskResult?, [Outbound]) {
        let workerIndex = workers.index(forKey: peer)
        if let workerIndex { workers.values[workerIndex].lastSeen = now }
        // Found by the key it echoes (minor 1), else by its ID. Only the answer to the current attempt,
        // from the worker that holds it, frees a slot.
        guard let key = result.taskKey != 0 ? result.taskKey : keysByID[result.taskID],
              let entry = entries[key], entry.assignment.attempt == result.attempt,
              entry.assignment.taskID == result.taskID
        else {
            staleResults += 1
            return (nil, [])
        }
        switch entry.state {
        case .running(let worker) where worker == peer:
            if let workerIndex, entry.assignment.sequence > workers.values[workerIndex].acknowledgedSequence {
                // Assignments arrive in order: the worker received every one up to this.
                workers.values[workerIndex].acknowledgedSequence = entry.assignment.sequence
            }
            if entry.sentByReference, entry.pinnedTo == nil, case .failure(let failure) = result.outcome, failure.code == .inputMissing {
                // The worker no longer had the input: send the bytes, to whichever worker is free.
                localInputsMissed += 1
                workers[peer]?.running.remove(key)
                entries[key]?.assignment.attempt += 1
                entries[key]?.state = .queued
                entries[key]?.sentByReference = false
                readyQueue.enqueue(key, batch: entry.assignment.batchID, urgency: entry.priority, front: true)
                return (nil, dispatch())
            }
            removeEntry(key)
            throughput.record(at: now)
            let succeeded = if case .output = result.outcome { true } else { false }
            if case .output(let output) = result.outcome {
                if entry.assignment.kind == .download {
                    downloadBytesReceived += UInt64(output.data.count)
                } else {
                    outputBytesReceived += UInt64(output.data.count)
                }
                if entry.dependentKey != 0, output.heldOnWorker { placements.record(entry.dependentKey, on: peer) }
            }
            if let workerIndex {
                workers.values[workerIndex].running.remove(key)
                if succeeded { workers.values[workerIndex].completed += 1 } else { workers.values[workerIndex].failed += 1 }
                if succeeded, entry.dependentKey != 0, case .output(let output) = result.outcome,
                   output.heldOnWorker || !output.data.isEmpty, output.mediaType.hasPrefix("image/"),
                   workers.values[workerIndex].acceptsBatches, !workers.values[workerIndex].draining {
                    // Locality: the slot stays taken, kept for the tilt-shift of these bytes.
                    workers.values[workerIndex].running.insert(entry.dependentKey)
                    reservations[entry.dependentKey] = Reservation(worker: peer, since: now)
                }
            }
            if succeeded { completedTasks += 1 } else { failedTasks += 1 }
            var delivered = result
            delivered.taskKey = key
            return (delivered, dispatch())
        case .cancelling(let worker) where worker == peer:
            // The worker confirmed (or finished anyway): nobody waits for it any more.
            if let workerIndex { workers.values[workerIndex].running.remove(key) }
            removeEntry(key)
            return (nil, dispatch())
        default:
            staleResults += 1
            return (nil, [])
        }
    }

    /// Withdraws a task: a queued one is dropped at once, a running one is cancelled on its worker with
    /// `CancelTask{task_key}` (its slot stays taken until the worker confirms). A task the dispatcher does
    /// not hold gives back the slot kept for it, if any.
    mutating func cancel(key: TaskKey, reason: String) -> [Outbound] {
        guard let entry = entries[key] else { return release(key) }
        switch entry.state {
        case .queued:
            removeEntry(key)
            if let holder = entry.pinnedTo {
                workers[holder]?.pinned.removeAll { $0 == key }
            } else {
                readyQueue.remove(key)
            }
            return []
        case .running(let worker):
            entries[key]?.state = .cancelling(worker: worker)
            return [Outbound(peer: worker, message: .cancelTask(CancelTask(
                taskID: entry.assignment.taskID, reason: reason, taskKey: key)))]
        case .cancelling:
            return []
        }
    }

    /// Describes a batch before its tasks come: whose it is and its priority, for the fair share.
    mutating func share(batch batchID: String, as shareClass: ShareClass) {
        readyQueue.register(batch: batchID, as: shareClass)
    }

    /// Forgets a finished batch's description.
    mutating func forgetShare(of batchID: String) {
        readyQueue.unregister(batch: batchID)
    }

    /// Tasks finished per second over the last 10 seconds.
    func tasksPerSecond(now: ContinuousClock.Instant) -> Double { throughput.rate(at: now) }

    /// Where a task is, or `nil` when the dispatcher does not hold it.
    func state(of key: TaskKey) -> EntryState? { entries[key]?.state }

    /// Where the task with this ID is, or `nil` when the dispatcher does not hold it.
    func state(of taskID: String) -> EntryState? { key(of: taskID).flatMap { entries[$0]?.state } }

    // MARK: Workers

    /// Registers a worker (again): it is given its slots as credit.
    mutating func register(_ hello: WorkerHello, peer: PeerIdentity, now: ContinuousClock.Instant) -> [Outbound] {
        if !hello.workerID.isEmpty, let problem = PeerInputRules.workerIDProblem(hello.workerID) {
            return [Outbound(peer: peer, message: .refusal(Refusal(
                code: .invalidRequest, reason: "\(problem): start the worker with another --worker-id")))]
        }
        // A worker that says hello again has forgotten its tasks (it cancels them on welcome).
        removeWorker(peer)
        workers[peer] = WorkerRecord(
            peer: peer, workerID: hello.workerID.isEmpty ? peer.description : hello.workerID,
            hostname: hello.hostname, version: hello.version,
            slots: Int(max(1, hello.slots)), lastSeen: now, acceptsBatches: hello.acceptsBatches)
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
    /// heartbeats. Its attempt is lost (`takeWorkerLosses()`): the coordinator fails it as `workerLost`,
    /// and its operation retries it as its batch allows. A cancelled task the worker no longer holds frees
    /// its slot. Returns how many assignments were found lost.
    mutating func heartbeat(_ heartbeat: Heartbeat = Heartbeat(workerID: ""), from peer: PeerIdentity,
                            now: ContinuousClock.Instant) -> (lost: Int, out: [Outbound]) {
        guard let worker = workers[peer] else {
            return (0, [Outbound(peer: peer, message: .refusal(.unknownWorker))])
        }
        workers[peer]?.lastSeen = now
        workers[peer]?.droppedMessages = heartbeat.droppedMessages
        workers[peer]?.acknowledgedSequence = max(worker.acknowledgedSequence, heartbeat.lastSequence)
        // Only minor-1 workers are sent sequences and report what they hold.
        guard worker.acceptsBatches, !worker.running.isEmpty else { return (0, []) }
        let holding = Set(heartbeat.holding)
        var lost = 0
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
            workers[peer]?.running.remove(key)
            freed = true
            switch entry.state {
            case .cancelling:
                removeEntry(key)  // nothing to confirm: the worker does not hold it
            case .running:
                loseAttempt(key, entry, workerID: worker.workerID, reason:
                    "never received its assignment whole (lost on the way, or unreadable: does it run another version of shiftwork?)")
                lost += 1
                lostDeliveries += 1
            case .queued:
                break
            }
        }
        return (lost, freed ? dispatch() : [])
    }

    /// A worker says goodbye. Draining, it keeps its tasks and gets no new ones; leaving, whatever it
    /// still holds goes back to the queue.
    mutating func workerLeft(_ peer: PeerIdentity, draining: Bool) -> [Outbound] {
        if draining {
            workers[peer]?.draining = true
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
        let dead = workers.values.filter { now - $0.lastSeen > workerTimeout }
        for worker in dead { removeWorker(worker.peer, died: true) }
        return (dead.map(\.workerID), dispatch())
    }

    /// Forgets a worker. The attempts of the tasks it ran are lost (`WorkerLoss`): all of them when it
    /// `died`; when it left (a goodbye, or a hello again), those it had reported receiving (it started
    /// them), while those it never acknowledged are queued again, first in line, with a new attempt number
    /// and without counting an attempt (handed back before they started).
    private mutating func removeWorker(_ peer: PeerIdentity, died: Bool = false) {
        guard let worker = workers.removeValue(forKey: peer) else { return }
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
                    loseAttempt(key, entry, workerID: worker.workerID, reason: "died while running it (silent, or its connection gone)")
                } else if sequence == 0 || sequence <= worker.acknowledgedSequence {
                    loseAttempt(key, entry, workerID: worker.workerID, reason: "left while running it")
                } else {
                    requeue(key, entry)
                }
            case .cancelling:
                removeEntry(key)  // its cancel can no longer be confirmed; nobody waits for it
            case .queued:
                break
            }
        }
    }

    /// Queues a task again, first in line, with a new attempt number (a late result of the old one is stale).
    private mutating func requeue(_ key: TaskKey, _ entry: Entry) {
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

    // MARK: Dispatch

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

    /// Sends ready tasks to workers with free slots, filling the least loaded first.
    private mutating func dispatch() -> [Outbound] {
        var out = workersWithPinned.isEmpty ? [] : dispatchPinned()
        guard !readyQueue.isEmpty else { return out }
        var free: [(peer: PeerIdentity, slots: Int, batchable: Bool)] = []
        // Read in place: iterating `(peer, worker)` copied every WorkerRecord (its `running` set retained and
        // released) on every call, which with 1,000 workers was half the coordinator's CPU (docs/benchmarks.md).
        var index = workers.startIndex
        while index != workers.endIndex {
            let slots = workers.values[index].freeSlots
            if slots > 0 { free.append((workers.keys[index], slots, workers.values[index].acceptsBatches)) }
            workers.formIndex(after: &index)
        }
        guard !free.isEmpty else { return out }
        if free.count > 1 { free.sort { $0.slots > $1.slots } }
        var next = 0
        while !free.isEmpty, let key = readyQueue.dequeue() {
            guard let index = entries.index(forKey: key), entries.values[index].state == .queued else { continue }
            if next >= free.count { next = 0 }
            if free.count > 1, let avoid = entries.values[index].avoid, free[next].peer == avoid {
                next = (next + 1) % free.count  // a retry goes to another worker with a free slot
            }
            let peer = free[next].peer
            entries.values[index].state = .running(worker: peer)
            entries.values[index].sentByReference = false
            if !free[next].batchable && !entries.values[index].mappedByID {
                // A minor-0 worker answers with the task ID only.
                entries.values[index].mappedByID = true
                keysByID[entries.values[index].assignment.taskID] = key
            }
            workers[peer]?.running.insert(key)
            if free[next].batchable, let sent = workers[peer]?.assignmentsSent {
                workers[peer]?.assignmentsSent = sent + 1
                entries.values[index].assignment.sequence = sent + 1
                entries.values[index].heartbeatsUnseen = 0
            }
            out.append(Outbound(
                peer: peer, message: .taskAssignment(entries.values[index].assignment), batchable: free[next].batchable))
            free[next].slots -= 1
            if free[next].slots == 0 { free.remove(at: next) } else { next += 1 }
        }
        return out
    }
}
