import Foundation
import Wire

/// A message the coordinator sends to one peer.
struct Outbound {
    let peer: PeerIdentity
    let message: Message
}

/// The coordinator's scheduling state and rules, free of I/O: each event goes in, the messages to send
/// come out. `Coordinator` feeds it from its socket and timers; tests can drive it directly.
///
/// Rules:
/// - Credit-based flow control: a worker holds at most `slots` tasks; a slot is freed only by the
///   worker's answer for that task.
/// - A finished download readies its tilt-shift with the downloaded bytes injected; a failed or
///   cancelled one cancels it, and the item fails with the cause.
/// - A worker silent for longer than the timeout is dead: its tasks are queued again with a new attempt
///   number, and a late result from the old attempt is ignored.
struct CoordinatorState {
    let coordinatorID: String
    let heartbeatInterval: Duration
    let workerTimeout: Duration

    private(set) var workers: [PeerIdentity: WorkerRecord] = [:]
    private(set) var tasks: [String: TaskRecord] = [:]
    private(set) var batches: [String: BatchRecord] = [:]
    private var readyQueue = TaskQueue()
    /// Finished batches, oldest first, kept for `status` until there are more than `finishedBatchesKept`.
    private var finishedBatches: [String] = []
    private let finishedBatchesKept = 100

    private(set) var completedTasks: UInt64 = 0
    private(set) var failedTasks: UInt64 = 0
    /// Messages that could not be decoded, came from the wrong kind of peer, or answered a task attempt
    /// that is no longer current.
    var droppedMessages: UInt64 = 0

    init(coordinatorID: String, heartbeatInterval: Duration, workerTimeout: Duration) {
        self.coordinatorID = coordinatorID
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
    }

    var queuedTaskCount: Int { readyQueue.count }
    var runningTaskCount: Int { workers.values.reduce(0) { $0 + $1.running.count } }

    // MARK: Events

    /// Handles one decoded message from `peer`.
    mutating func handle(_ message: Message, from peer: PeerIdentity, now: ContinuousClock.Instant) -> [Outbound] {
        var out: [Outbound] = []
        switch message {
        case .workerHello(let hello):
            out += register(hello, peer: peer, now: now)
        case .heartbeat:
            if workers[peer] != nil {
                workers[peer]?.lastSeen = now
            } else {
                // Unknown to us (we restarted, or declared it dead): ask it to introduce itself again.
                out.append(Outbound(peer: peer, message: .refusal(Refusal(reason: Self.unknownWorkerReason))))
            }
        case .workerGoodbye:
            out += removeWorker(peer, reason: "the worker left")
        case .taskResult(let result):
            workers[peer]?.lastSeen = now
            out += complete(result, from: peer)
        case .submitBatch(let submit):
            out += accept(submit, from: peer)
        case .statusRequest(let request):
            out.append(Outbound(peer: peer, message: .statusReply(status(for: request, now: now))))
        case .cancelBatch(let cancel):
            out += self.cancel(cancel, from: peer)
        case .welcome, .taskAssignment, .cancelTask, .batchAccepted, .itemFinished, .batchFinished,
            .statusReply, .refusal:
            droppedMessages += 1  // only the coordinator sends these
        }
        out += dispatch()
        return out
    }

    /// The reason sent to a worker the coordinator does not know; the worker answers with a new hello.
    static let unknownWorkerReason = "unknown worker: send hello"

    /// Declares workers silent for longer than the timeout dead and requeues their tasks.
    mutating func expireWorkers(now: ContinuousClock.Instant) -> [Outbound] {
        let dead = workers.values.filter { now - $0.lastSeen > workerTimeout }.map(\.peer)
        var out: [Outbound] = []
        for peer in dead {
            out += removeWorker(peer, reason: "no heartbeat for \(workerTimeout)")
        }
        out += dispatch()
        return out
    }

    // MARK: Workers

    private mutating func register(_ hello: WorkerHello, peer: PeerIdentity, now: ContinuousClock.Instant) -> [Outbound] {
        // A worker that says hello again has forgotten its tasks (it cancels them on welcome).
        var out = removeWorker(peer, reason: "the worker registered again")
        workers[peer] = WorkerRecord(
            peer: peer, workerID: hello.workerID.isEmpty ? peer.description : hello.workerID,
            hostname: hello.hostname, version: hello.version,
            slots: Int(max(1, hello.slots)), lastSeen: now)
        let interval = heartbeatInterval.components
        let milliseconds = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        out.append(Outbound(
            peer: peer,
            message: .welcome(Welcome(heartbeatIntervalMs: UInt32(clamping: milliseconds), coordinatorID: coordinatorID))))
        return out
    }

    /// Forgets a worker and queues its tasks again with a new attempt number.
    private mutating func removeWorker(_ peer: PeerIdentity, reason: String) -> [Outbound] {
        guard let worker = workers.removeValue(forKey: peer) else { return [] }
        for taskID in worker.running.sorted() {
            guard var task = tasks[taskID], case .running = task.state else { continue }
            task.attempt += 1
            task.state = .queued
            tasks[taskID] = task
            readyQueue.pushFront(taskID)
        }
        _ = reason
        return []
    }

    /// Sends ready tasks to workers with free slots, filling the least loaded first.
    private mutating func dispatch() -> [Outbound] {
        guard !readyQueue.isEmpty else { return [] }
        var out: [Outbound] = []
        var candidates = workers.values.filter { $0.freeSlots > 0 }.map(\.peer)
        while !readyQueue.isEmpty, !candidates.isEmpty {
            candidates.sort { (workers[$0]?.freeSlots ?? 0) > (workers[$1]?.freeSlots ?? 0) }
            let peer = candidates[0]
            guard let taskID = readyQueue.popFront() else { break }
            guard var task = tasks[taskID], task.state == .queued else { continue }
            task.state = .running(worker: peer)
            tasks[taskID] = task
            workers[peer]?.running.insert(taskID)
            let parameters = batches[task.batchID]?.parameters
            out.append(Outbound(peer: peer, message: .taskAssignment(TaskAssignment(
                taskID: task.id, batchID: task.batchID, attempt: task.attempt, kind: task.kind,
                source: task.source, inputs: task.input.map { [$0] } ?? [], parameters: parameters))))
            markItem(of: task, running: true)
            if (workers[peer]?.freeSlots ?? 0) == 0 { candidates.removeFirst() }
        }
        return out
    }

    // MARK: Results

    private mutating func complete(_ result: TaskResult, from peer: PeerIdentity) -> [Outbound] {
        guard var task = tasks[result.taskID], task.attempt == result.attempt,
            case .running(let worker) = task.state, worker == peer
        else {
            // A result for a task we no longer track, an older attempt, or from a worker that no longer holds it.
            droppedMessages += 1
            if workers[peer]?.running.remove(result.taskID) != nil { return [] }
            return []
        }
        workers[peer]?.running.remove(task.id)
        switch result.outcome {
        case .output(let output):
            workers[peer]?.completed += 1
            completedTasks += 1
            task.state = .succeeded
            task.input = nil
            tasks[task.id] = task
            if let dependentID = task.dependent, var dependent = tasks[dependentID], dependent.state == .waiting {
                dependent.input = InjectedInput(fromTaskID: task.id, data: output.data, mediaType: output.mediaType)
                dependent.state = .queued
                tasks[dependentID] = dependent
                readyQueue.pushBack(dependentID)
                return []
            }
            return finishItem(of: task, outcome: .output(output))
        case .failure(let failure):
            workers[peer]?.failed += 1
            failedTasks += 1
            task.state = failure.code == .cancelled ? .cancelled : .failed
            task.input = nil
            tasks[task.id] = task
            var cause = failure
            if let dependentID = task.dependent, var dependent = tasks[dependentID], !dependent.state.isFinished {
                // The dependent cannot run: it is cancelled, and carries its dependency's error as the cause.
                dependent.state = .cancelled
                tasks[dependentID] = dependent
                cause = TaskFailure(code: failure.code, message: failure.message)
            }
            return finishItem(of: task, outcome: .failure(cause))
        }
    }

    // MARK: Batches

    private mutating func accept(_ submit: SubmitBatch, from client: PeerIdentity) -> [Outbound] {
        guard !submit.items.isEmpty else {
            return [Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, reason: "the batch has no items: give at least one image URL or path")))]
        }
        let batchID = Self.newBatchID()
        let parameters = submit.parameters ?? WireTiltShiftParameters(
            focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10)
        var items: [BatchRecord.Item] = []
        items.reserveCapacity(submit.items.count)
        for (index, item) in submit.items.enumerated() {
            let download = "\(batchID)/\(index)/download"
            let tiltShift = "\(batchID)/\(index)/tilt-shift"
            tasks[download] = TaskRecord(
                id: download, batchID: batchID, itemIndex: index, kind: .download, source: item.source,
                state: .queued, dependent: tiltShift)
            tasks[tiltShift] = TaskRecord(
                id: tiltShift, batchID: batchID, itemIndex: index, kind: .tiltShift, source: item.source,
                state: .waiting)
            readyQueue.pushBack(download)
            items.append(BatchRecord.Item(
                source: item.source,
                outputName: item.outputName.isEmpty ? "item-\(index)" : item.outputName,
                downloadTaskID: download, tiltShiftTaskID: tiltShift))
        }
        batches[batchID] = BatchRecord(id: batchID, client: client, parameters: parameters, items: items)
        return [Outbound(peer: client, message: .batchAccepted(BatchAccepted(
            requestID: submit.requestID, batchID: batchID, itemCount: UInt32(items.count))))]
    }

    private mutating func markItem(of task: TaskRecord, running: Bool) {
        guard running, var batch = batches[task.batchID], batch.items.indices.contains(task.itemIndex),
            batch.items[task.itemIndex].state == .queued
        else { return }
        batch.items[task.itemIndex].state = .running
        batches[task.batchID] = batch
    }

    /// Records an item's outcome, tells its client, and finishes the batch after its last item.
    private mutating func finishItem(of task: TaskRecord, outcome: TaskOutcome) -> [Outbound] {
        guard var batch = batches[task.batchID], batch.items.indices.contains(task.itemIndex),
            !batch.items[task.itemIndex].state.isFinished
        else { return [] }
        let index = task.itemIndex
        switch outcome {
        case .output:
            batch.items[index].state = .succeeded
        case .failure(let failure):
            batch.items[index].state = failure.code == .cancelled ? .cancelled : .failed
            batch.items[index].error = failure.message
        }
        batch.finishedCount += 1
        batches[task.batchID] = batch
        var out = [Outbound(peer: batch.client, message: .itemFinished(ItemFinished(
            batchID: batch.id, itemIndex: UInt32(index), outputName: batch.items[index].outputName,
            outcome: outcome)))]
        if batch.isFinished {
            out.append(Outbound(peer: batch.client, message: .batchFinished(BatchFinished(
                batchID: batch.id, succeeded: batch.count(.succeeded), failed: batch.count(.failed),
                cancelled: batch.count(.cancelled)))))
            retire(batch)
        }
        return out
    }

    /// Drops a finished batch's tasks (and their payloads); keeps its summary for `status`.
    private mutating func retire(_ batch: BatchRecord) {
        for item in batch.items {
            tasks[item.downloadTaskID] = nil
            tasks[item.tiltShiftTaskID] = nil
        }
        finishedBatches.append(batch.id)
        if finishedBatches.count > finishedBatchesKept {
            let oldest = finishedBatches.removeFirst()
            batches[oldest] = nil
        }
    }

    private mutating func cancel(_ request: CancelBatch, from peer: PeerIdentity) -> [Outbound] {
        guard let batch = batches[request.batchID] else {
            return [Outbound(peer: peer, message: .refusal(Refusal(
                reason: "no batch \(request.batchID): `shiftwork status` lists the batches the coordinator knows")))]
        }
        let indexes = request.itemIndexes.isEmpty ? Array(batch.items.indices) : request.itemIndexes.map { Int($0) }
        var out: [Outbound] = []
        for index in indexes where batch.items.indices.contains(index) {
            let item = batch.items[index]
            for taskID in [item.downloadTaskID, item.tiltShiftTaskID] {
                guard var task = tasks[taskID], !task.state.isFinished else { continue }
                if case .running(let worker) = task.state {
                    // Reaches running work; the slot stays taken until the worker confirms.
                    out.append(Outbound(peer: worker, message: .cancelTask(CancelTask(
                        taskID: taskID, reason: "batch \(batch.id) cancelled"))))
                }
                task.state = .cancelled
                tasks[taskID] = task
            }
            out += finishItem(
                of: TaskRecord(id: item.tiltShiftTaskID, batchID: batch.id, itemIndex: index, kind: .tiltShift,
                    source: item.source, state: .cancelled),
                outcome: .failure(TaskFailure(code: .cancelled, message: "cancelled by request")))
        }
        return out
    }

    private static func newBatchID() -> String {
        "b-" + UUID().uuidString.lowercased().prefix(8)
    }
}
