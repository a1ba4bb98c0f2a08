import Foundation
import Logging
import Messaging
import Operations
import Wire

/// Settings of a coordinator.
public struct CoordinatorConfiguration: Sendable {
    /// Endpoints the coordinator's ROUTER socket binds, e.g. `tcp://0.0.0.0:5570` or `inproc://shiftwork`.
    public var listen: [String]
    /// How often workers are asked to send heartbeats.
    public var heartbeatInterval: Duration
    /// Silence after which a worker is declared dead and its tasks requeued.
    public var workerTimeout: Duration
    /// Socket options (frame size limit, linger, queue bounds).
    public var socketOptions: SocketOptions
    /// At most this many downloads from one origin host run at once, across all workers (politeness
    /// towards the servers the images come from).
    public var maxDownloadsPerHost: Int

    /// Creates a configuration listening on `listen`.
    public init(
        listen: [String] = [ClusterDefaults.listenEndpoint],
        heartbeatInterval: Duration = ClusterDefaults.heartbeatInterval,
        workerTimeout: Duration = ClusterDefaults.workerTimeout,
        socketOptions: SocketOptions = SocketOptions(),
        maxDownloadsPerHost: Int = ClusterDefaults.maxDownloadsPerHost
    ) {
        self.listen = listen
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
        self.socketOptions = socketOptions
        self.maxDownloadsPerHost = max(1, maxDownloadsPerHost)
    }
}

/// The coordinator: accepts batches from clients, models each as a group operation of remote
/// operations (per item a download, and a tilt-shift into which the download's bytes are injected), hands
/// their tasks to workers as they have free slots, and streams every item's result to its client.
///
/// The operations engine applies the same dependency, injection and cancellation rules as it does
/// locally; the `Dispatcher` decides which worker runs what. One ROUTER socket serves clients and
/// workers alike; the message type tells them apart.
public actor Coordinator {
    private let configuration: CoordinatorConfiguration
    private let context: MessagingContext
    private let logger: Logger
    private var dispatcher: Dispatcher
    private var channel: SocketChannel?
    private var background: [Task<Void, Never>] = []
    /// Runs the batches (group operations); their remote children mostly wait, so there is no limit.
    private let engine = WorkQueue(name: "coordinator batches")
    /// Remote operations waiting for their task's result, by task key.
    private var waiters: [TaskKey: CheckedContinuation<TaskOutput, any Error>] = [:]
    private var batches: [String: BatchOperation] = [:]
    private var finishedItems: [String: Int] = [:]
    /// Finished batches, oldest first, kept for `status` until there are more than `finishedBatchesKept`.
    private var finishedBatches: [String] = []
    private let finishedBatchesKept = 100
    /// Messages that could not be decoded or came from the wrong kind of peer.
    private var droppedMessages: UInt64 = 0
    private var batchesAccepted: UInt64 = 0
    /// Tasks of accepted batches that have not reached the dispatcher yet: waiting for their dependency,
    /// the per-host download cap, or their batch's limit of started tasks.
    private var waitingTasks = 0
    /// While the messages of one socket wake-up are handled: what to send, sent together at the end.
    private var outbox: [Outbound]?
    /// Items whose last operation finished, gathered on the engine's threads and finished here in groups.
    private let finishedItemInbox = CompletionInbox<(BatchOperation.Item, BatchOperation)>()
    /// Requests of remote operations, posted from the engine's threads (see `run`).
    private let remoteRequests = CompletionInbox<RemoteRequest>()

    /// Tasks accepted and not started: waiting for a worker slot, or to be dispatched at all.
    private var queuedTaskCount: Int { dispatcher.queuedTaskCount + waitingTasks }

    /// Creates a coordinator that will bind within `context` (share it with workers for `inproc://`).
    public init(configuration: CoordinatorConfiguration, context: MessagingContext, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.dispatcher = Dispatcher(
            heartbeatInterval: configuration.heartbeatInterval, workerTimeout: configuration.workerTimeout,
            coordinatorID: "coordinator-" + UUID().uuidString.lowercased().prefix(8))
    }

    /// Binds the listening endpoints and starts serving. Returns the first bound endpoint with any
    /// wildcard port resolved.
    ///
    /// - Throws: `ZeroMQError` when an endpoint cannot be bound (in use, malformed, not a local address).
    @discardableResult
    public func start() async throws -> String? {
        let channel = try await SocketChannel.open(
            context: context, kind: .router, options: configuration.socketOptions,
            bind: configuration.listen, name: "coordinator",
            onUnroutable: { [weak self] identity in
                guard let self else { return }
                Task { await self.peerUnreachable(PeerIdentity(identity)) }
            })
        self.channel = channel
        logger.info("coordinator listening", metadata: [
            "endpoints": "\(configuration.listen)", "bound": "\(channel.boundEndpoint ?? "-")",
        ])
        background.append(Task { await self.receive(from: channel) })
        background.append(Task { await self.watchWorkers() })
        return channel.boundEndpoint
    }

    /// Stops serving: cancels every batch, closes the socket.
    public func stop() async {
        for task in background { task.cancel() }
        background = []
        engine.cancelAll()
        for waiter in waiters.values { waiter.resume(throwing: CancellationError()) }
        waiters = [:]
        await channel?.close()
        channel = nil
    }

    // MARK: Messages

    private func receive(from channel: SocketChannel) async {
        for await received in channel.messageBatches {
            sendingTogether { for frames in received { handle(frames) } }
        }
    }

    private func handle(_ frames: [[UInt8]]) {
        guard frames.count == 2 else {
            droppedMessages += 1
            logger.debug("dropped a message with \(frames.count) frames (expected identity + envelope)")
            return
        }
        let peer = PeerIdentity(frames[0])
        let message: Message
        do {
            message = try WireCodec.decode(frames[1])
        } catch {
            droppedMessages += 1
            logger.warning("dropped a malformed message", metadata: ["peer": "\(peer)", "error": "\(error)"])
            if case .unsupportedMajorVersion = error {
                send([Outbound(peer: peer, message: .refusal(Refusal(reason: error.description)))])
            }
            return
        }
        let now = ContinuousClock.now
        switch message {
        case .workerHello(let hello):
            logger.info("worker joined", metadata: [
                "worker": "\(hello.workerID)", "slots": "\(hello.slots)", "host": "\(hello.hostname)",
            ])
            send(dispatcher.register(hello, peer: peer, now: now))
        case .heartbeat:
            send(dispatcher.heartbeat(from: peer, now: now))
        case .workerGoodbye(let goodbye):
            logger.info(goodbye.draining ? "worker draining" : "worker left", metadata: ["worker": "\(goodbye.workerID)"])
            send(dispatcher.workerLeft(peer, draining: goodbye.draining))
        case .taskResult(let result):
            let (current, out) = dispatcher.complete(result, from: peer, now: now)
            if let current { deliver(current) }
            send(out)
        case .taskResults(let results):
            for result in results {
                let (current, out) = dispatcher.complete(result, from: peer, now: now)
                if let current { deliver(current) }
                send(out)
            }
        case .submitBatch(let submit):
            accept(submit, from: peer)
        case .statusRequest(let request):
            send([Outbound(peer: peer, message: .statusReply(status(for: request, now: now)))])
        case .cancelBatch(let request):
            cancel(request, from: peer)
        case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .batchAccepted, .itemFinished, .itemsFinished,
            .batchFinished, .statusReply, .refusal:
            droppedMessages += 1  // only the coordinator sends these
        }
    }

    /// Sends `outbound` (while a wake-up's messages are handled: at its end), batchable messages to one
    /// peer grouped, with one wake-up of the socket's thread.
    private func send(_ outbound: [Outbound]) {
        guard !outbound.isEmpty else { return }
        if outbox != nil {
            outbox! += outbound
            return
        }
        guard let channel else { return }
        channel.send(contentsOf: Outbound.coalesced(outbound).map { [$0.peer.bytes, WireCodec.encode($0.message)] })
    }

    /// Runs `body` with every `send` in it held back and sent together at its end.
    private func sendingTogether(_ body: () -> Void) {
        guard outbox == nil else { return body() }
        outbox = []
        body()
        let out = outbox ?? []
        outbox = nil
        send(out)
    }

    // MARK: Remote operations

    /// Queues a task and suspends until a worker's result arrives (see `RemoteTaskRunning`).
    ///
    /// Nonisolated: the request is posted to `remoteRequests` without hopping onto the actor, and the
    /// result resumes the operation's task directly (not through the actor); `handleRemoteRequests()`
    /// queues the posted tasks in groups.
    fileprivate nonisolated func run(_ assignment: TaskAssignment, priority: Int, wasWaiting: Bool) async throws -> TaskOutput {
        var keyed = assignment
        if keyed.taskKey == 0 { keyed.taskKey = RemoteTaskOperation.makeKey() }
        let assignment = keyed
        let call = RemoteCall()
        let inbox = remoteRequests
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                inbox.post(.run(assignment, priority: priority, wasWaiting: wasWaiting, call: call, continuation)) {
                    Task { await self.handleRemoteRequests() }
                }
            }
        } onCancel: {
            // Marked before the withdrawal is posted: a run request handled after this sees it.
            call.cancel()
            inbox.post(.withdraw(assignment.taskKey)) { Task { await self.handleRemoteRequests() } }
        }
    }

    /// Queues the tasks of remote operations and withdraws cancelled ones, in the order posted.
    private func handleRemoteRequests() {
        let requests = remoteRequests.drain()
        guard !requests.isEmpty else { return }
        sendingTogether {
            for request in requests {
                switch request {
                case .run(let assignment, let priority, let wasWaiting, let call, let continuation):
                    if wasWaiting { waitingTasks -= 1 }
                    if call.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        continue
                    }
                    waiters[assignment.taskKey] = continuation
                    send(dispatcher.enqueue(assignment, priority: priority))
                case .withdraw(let key):
                    withdraw(key)
                }
            }
        }
    }

    /// Withdraws a cancelled remote operation's task from the cluster.
    private func withdraw(_ key: TaskKey) {
        waiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
        send(dispatcher.cancel(key: key, reason: "cancelled"))
    }

    /// Resumes the remote operation waiting for `result` (whose `taskKey` the dispatcher has set).
    private func deliver(_ result: TaskResult) {
        guard let waiter = waiters.removeValue(forKey: result.taskKey) else { return }
        switch result.outcome {
        case .output(let output): waiter.resume(returning: output)
        case .failure(let failure): waiter.resume(throwing: RemoteTaskError(failure: failure))
        }
    }

    // MARK: Batches

    private func accept(_ submit: SubmitBatch, from client: PeerIdentity) {
        guard submit.kind == .unspecified || submit.kind == .noop else {
            send([Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, reason: "batches of \(submit.kind) tasks are not supported: submit images")))])
            return
        }
        guard !submit.items.isEmpty else {
            send([Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, reason: "the batch has no items: give at least one image URL or path")))])
            return
        }
        let batchID = "b-" + UUID().uuidString.lowercased().prefix(8)
        let parameters = submit.parameters ?? WireTiltShiftParameters(
            focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10)
        let batch: BatchOperation
        do {
            batch = try BatchOperation(
                batchID: batchID, client: client, sources: submit.items, parameters: parameters,
                kind: submit.kind, maxDownloadsPerHost: configuration.maxDownloadsPerHost,
                runner: CoordinatorTaskRunner(coordinator: self), clientAcceptsBatches: submit.acceptsBatches)
        } catch {
            send([Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, reason: "the batch could not be planned: \(error)")))])
            return
        }
        let inbox = finishedItemInbox
        for item in batch.items {
            // Gathered, then finished in groups by `finishItems()`: one task per burst, not per item.
            item.last.onCompletion { _ in
                inbox.post((item, batch)) { Task { await self.finishItems() } }
            }
        }
        batches[batchID] = batch
        finishedItems[batchID] = 0
        batchesAccepted += 1
        waitingTasks += batch.items.reduce(0) { $0 + $1.tasks.count }
        logger.info("batch accepted", metadata: ["batch": "\(batchID)", "client": "\(client)", "items": "\(batch.items.count)"])
        send([Outbound(peer: client, message: .batchAccepted(BatchAccepted(
            requestID: submit.requestID, batchID: batchID, itemCount: UInt32(batch.items.count))))])
        do {
            try engine.addOperation(batch)
        } catch {
            batch.cancel(error: error)
        }
    }

    /// Finishes the items gathered in `finishedItemInbox`, their messages sent together.
    private func finishItems() {
        let finished = finishedItemInbox.drain()
        guard !finished.isEmpty else { return }
        sendingTogether { for (item, batch) in finished { itemFinished(item, of: batch) } }
    }

    /// Streams one finished item to its client; after the last item, the batch summary.
    private func itemFinished(_ item: BatchOperation.Item, of batch: BatchOperation) {
        let outcome: TaskOutcome
        if item.last.state == .finished, let output = item.last.takeOutput() {
            outcome = .output(output)
        } else {
            let failure = BatchOperation.failure(of: item)
            outcome = .failure(failure)
            logger.info("item failed", metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)", "error": "\(failure.message)"])
        }
        for task in item.tasks {
            task.releasePayloads()
            if task.claimStart() { waitingTasks -= 1 }  // it never ran (cancelled, or its download failed)
        }
        var out = [Outbound(peer: batch.client, message: .itemFinished(ItemFinished(
            batchID: batch.batchID, itemIndex: UInt32(item.index), outputName: item.outputName, outcome: outcome)),
            batchable: batch.clientAcceptsBatches)]
        let finished = (finishedItems[batch.batchID] ?? 0) + 1
        finishedItems[batch.batchID] = finished
        if finished == batch.items.count {
            let counts = summary(of: batch)
            out.append(Outbound(peer: batch.client, message: .batchFinished(BatchFinished(
                batchID: batch.batchID, succeeded: counts.succeeded, failed: counts.failed, cancelled: counts.cancelled))))
            logger.info("batch finished", metadata: [
                "batch": "\(batch.batchID)", "succeeded": "\(counts.succeeded)", "failed": "\(counts.failed)",
                "cancelled": "\(counts.cancelled)",
            ])
            retire(batch.batchID)
        }
        send(out)
    }

    private func summary(of batch: BatchOperation) -> (succeeded: UInt32, failed: UInt32, cancelled: UInt32) {
        var counts: (succeeded: UInt32, failed: UInt32, cancelled: UInt32) = (0, 0, 0)
        for item in batch.items {
            switch batch.itemState(item, dispatcher: dispatcher).state {
            case "succeeded": counts.succeeded += 1
            case "cancelled": counts.cancelled += 1
            case "failed": counts.failed += 1
            default: break
            }
        }
        return counts
    }

    /// Keeps a finished batch for `status` until newer ones push it out.
    private func retire(_ batchID: String) {
        finishedBatches.append(batchID)
        if finishedBatches.count > finishedBatchesKept {
            let oldest = finishedBatches.removeFirst()
            batches[oldest] = nil
            finishedItems[oldest] = nil
        }
    }

    private func cancel(_ request: CancelBatch, from peer: PeerIdentity) {
        guard let batch = batches[request.batchID] else {
            send([Outbound(peer: peer, message: .refusal(Refusal(
                reason: "no batch \(request.batchID): `shiftwork status` lists the batches the coordinator knows")))])
            return
        }
        let reason = BatchCancelledError(batchID: batch.batchID)
        logger.info("cancelling", metadata: ["batch": "\(batch.batchID)", "items": "\(request.itemIndexes.isEmpty ? "all" : "\(request.itemIndexes)")"])
        if request.itemIndexes.isEmpty {
            batch.cancel(error: reason)
            return
        }
        for index in request.itemIndexes where batch.items.indices.contains(Int(index)) {
            for task in batch.items[Int(index)].tasks { task.cancel(error: reason) }
        }
    }

    // MARK: Metrics

    /// Counters and gauges in Prometheus' text format, for `MetricsServer` (`--metrics-listen`).
    public func metrics() -> String {
        let now = ContinuousClock.now
        let workers = dispatcher.workers.values.sorted { $0.workerID < $1.workerID }
        var page = PrometheusText()
        page.single("shiftwork_workers", "gauge", "Workers connected to the coordinator.", Double(workers.count))
        page.family("shiftwork_worker_slots", "gauge", "Tasks a worker runs at once.",
                    workers.map { ([("worker", $0.workerID)], Double($0.slots)) })
        page.family("shiftwork_worker_running_tasks", "gauge", "Tasks a worker holds now (its load).",
                    workers.map { ([("worker", $0.workerID)], Double($0.running.count)) })
        page.family("shiftwork_worker_tasks_completed_total", "counter", "Tasks a worker completed.",
                    workers.map { ([("worker", $0.workerID)], Double($0.completed)) })
        page.family("shiftwork_worker_tasks_failed_total", "counter", "Tasks that failed on a worker.",
                    workers.map { ([("worker", $0.workerID)], Double($0.failed)) })
        page.single("shiftwork_tasks_queued", "gauge", "Tasks accepted and not started: the queue depth.",
                    Double(queuedTaskCount))
        page.single("shiftwork_tasks_running", "gauge", "Tasks sent to workers and not answered yet.",
                    Double(dispatcher.runningTaskCount))
        page.single("shiftwork_tasks_completed_total", "counter", "Tasks completed.", Double(dispatcher.completedTasks))
        page.single("shiftwork_tasks_failed_total", "counter", "Tasks failed.", Double(dispatcher.failedTasks))
        page.single("shiftwork_tasks_per_second", "gauge", "Tasks finished per second over the last 10 seconds.",
                    dispatcher.tasksPerSecond(now: now))
        page.single("shiftwork_batches_accepted_total", "counter", "Batches accepted.", Double(batchesAccepted))
        page.single("shiftwork_batches_running", "gauge", "Batches with unfinished items.",
                    Double(batches.count - finishedBatches.filter { batches[$0] != nil }.count))
        page.single("shiftwork_messages_dropped_total", "counter",
                    "Messages dropped: malformed, from the wrong kind of peer, or answering an attempt that is no longer current.",
                    Double(droppedMessages + dispatcher.staleResults))
        return page.text
    }

    // MARK: Status and liveness

    private func status(for request: StatusRequest, now: ContinuousClock.Instant) -> StatusReply {
        let workerStatuses = dispatcher.workers.values
            .sorted { $0.workerID < $1.workerID }
            .map { worker in
                WorkerStatus(
                    workerID: worker.workerID, hostname: worker.hostname, slots: UInt32(worker.slots),
                    running: UInt32(worker.running.count), completed: worker.completed, failed: worker.failed,
                    lastSeenMsAgo: Self.milliseconds(now - worker.lastSeen))
            }
        let selected: [BatchOperation]
        if request.batchID.isEmpty {
            selected = batches.values.sorted { $0.batchID < $1.batchID }
        } else {
            selected = batches[request.batchID].map { [$0] } ?? []
        }
        let batchStatuses = selected.map { batch in
            let counts = summary(of: batch)
            return BatchStatus(
                batchID: batch.batchID, itemCount: UInt32(batch.items.count), succeeded: counts.succeeded,
                failed: counts.failed, cancelled: counts.cancelled,
                items: request.batchID.isEmpty ? [] : batch.items.map { item in
                    let (state, error) = batch.itemState(item, dispatcher: dispatcher)
                    return ItemStatus(itemIndex: UInt32(item.index), source: item.source, state: state, error: error)
                })
        }
        return StatusReply(
            requestID: request.requestID, workers: workerStatuses, queuedTasks: UInt32(clamping: queuedTaskCount),
            runningTasks: UInt32(dispatcher.runningTaskCount), completedTasks: dispatcher.completedTasks,
            failedTasks: dispatcher.failedTasks, batches: batchStatuses,
            droppedMessages: droppedMessages + dispatcher.staleResults,
            tasksPerSecond: dispatcher.tasksPerSecond(now: now))
    }

    private static func milliseconds(_ duration: Duration) -> UInt64 {
        let parts = duration.components
        return UInt64(max(0, parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000))
    }

    /// A message could not be delivered to `peer`: if it is a worker, its connection is gone.
    private func peerUnreachable(_ peer: PeerIdentity) {
        let (wasWorker, poisoned, out) = dispatcher.workerUnreachable(peer)
        guard wasWorker else { return }
        logger.warning("worker unreachable (connection gone); its tasks are queued again", metadata: ["worker": "\(peer)"])
        for result in poisoned { deliver(result) }
        send(out)
    }

    private func watchWorkers() async {
        let interval = configuration.heartbeatInterval
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let (dead, poisoned, out) = dispatcher.expireWorkers(now: .now)
            for result in poisoned { deliver(result) }
            for worker in dead {
                logger.warning("worker declared dead; its tasks are queued again", metadata: [
                    "worker": "\(worker)", "silence": "> \(configuration.workerTimeout)",
                ])
            }
            send(out)
        }
    }
}

/// The coordinator as its remote operations see it.
private struct CoordinatorTaskRunner: RemoteTaskRunning {
    let coordinator: Coordinator
    func run(_ assignment: TaskAssignment, priority: Int, wasWaiting: Bool) async throws -> TaskOutput {
        try await coordinator.run(assignment, priority: priority, wasWaiting: wasWaiting)
    }
}
