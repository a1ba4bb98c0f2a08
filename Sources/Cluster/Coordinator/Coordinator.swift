import Foundation
import Fetching
import Imaging
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
    /// Where the journal and the finished results are kept, so that a restarted coordinator carries on
    /// with every accepted batch; `nil` keeps everything in memory only.
    public var dataDirectory: URL?
    /// Batches with more items are refused.
    public var maxBatchItems: Int
    /// A client whose unfinished items would exceed this is refused until some finish.
    public var maxPendingItemsPerClient: Int
    /// CurveZMQ: the coordinator's keys and the allow-list (`nil`: no authentication, no encryption).
    public var authentication: CoordinatorAuthentication?

    /// Creates a configuration listening on `listen`.
    public init(
        listen: [String] = [ClusterDefaults.listenEndpoint],
        heartbeatInterval: Duration = ClusterDefaults.heartbeatInterval,
        workerTimeout: Duration = ClusterDefaults.workerTimeout,
        socketOptions: SocketOptions = SocketOptions(),
        maxDownloadsPerHost: Int = ClusterDefaults.maxDownloadsPerHost,
        dataDirectory: URL? = nil,
        maxBatchItems: Int = ClusterDefaults.maxBatchItems,
        maxPendingItemsPerClient: Int = ClusterDefaults.maxPendingItemsPerClient,
        authentication: CoordinatorAuthentication? = nil
    ) {
        self.authentication = authentication
        self.listen = listen
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
        self.socketOptions = socketOptions
        self.maxDownloadsPerHost = max(1, maxDownloadsPerHost)
        self.dataDirectory = dataDirectory
        self.maxBatchItems = max(1, maxBatchItems)
        self.maxPendingItemsPerClient = max(1, maxPendingItemsPerClient)
    }
}

/// The coordinator: accepts batches from clients, models each as a group operation of remote
/// operations (per item a download, and a tilt-shift into which the download's bytes are injected), hands
/// their tasks to workers as they have free slots, and streams every item's result to its client.
///
/// The operations engine applies the same dependency, injection and cancellation rules as it does
/// locally; the `Dispatcher` decides which worker runs what. One ROUTER socket serves clients and
/// workers alike; the message type tells them apart.
///
/// With a data directory, accepted batches, finished items and cancellations go into a `Journal`
/// before anyone is told of them; a coordinator restarted on the same directory runs what was left
/// and serves the finished results again (`FetchResults`).
public actor Coordinator {
    private let configuration: CoordinatorConfiguration
    private let context: MessagingContext
    private let logger: Logger
    private var dispatcher: Dispatcher
    private var channel: SocketChannel?
    /// The ZAP handler, when CurveZMQ is on.
    private var authenticator: ZAPAuthenticator?
    private var background: [Task<Void, Never>] = []
    /// Runs the batches (group operations); their remote children mostly wait, so there is no limit.
    private let engine = WorkQueue(name: "coordinator batches")
    /// Remote operations waiting for their task's result, by task key.
    private var waiters: [TaskKey: CheckedContinuation<TaskOutput, any Error>] = [:]
    private var batches: [String: BatchOperation] = [:]
    /// Which items of each batch have finished (and been announced).
    private var progress: [String: FinishedItems] = [:]
    /// Clients attached to a batch besides the one that submitted it (`FetchResults`).
    private var subscribers: [String: Set<PeerIdentity>] = [:]
    /// Unfinished items per client, for `maxPendingItemsPerClient`.
    private var pendingItems: [PeerIdentity: Int] = [:]
    /// The durable state, with a data directory.
    private var journal: Journal?
    /// This start's number on the journal (1 without one); task attempts are numbered from it.
    private var incarnation: UInt32 = 1
    /// Clients being sent a batch's finished items again (`FetchResults`); they join the batch's
    /// audience once they have caught up.
    private var replaying: [String: Set<PeerIdentity>] = [:]
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
            coordinatorID: "coordinator-" + UUID().uuidString.lowercased().prefix(8),
            maxMessageBytes: UInt64(max(0, configuration.socketOptions.maxMessageSize)))
    }

    /// Binds the listening endpoints and starts serving. Returns the first bound endpoint with any
    /// wildcard port resolved.
    ///
    /// With `authentication`, the ZAP handler starts first, so that no peer is let in unchecked.
    ///
    /// - Throws: `ZeroMQError` when an endpoint cannot be bound (in use, malformed, not a local address)
    ///   or another ZAP handler runs in the context; `CurveKeyError` when libzmq lacks CurveZMQ.
    /// - Throws: `JournalFile.Failure` when the data directory cannot be used.
    @discardableResult
    public func start() async throws -> String? {
        var recovered = RecoveredState(replaying: [])
        if let directory = configuration.dataDirectory {
            let (journal, state) = try Journal.open(directory: directory, coordinatorID: dispatcher.coordinatorID)
            self.journal = journal
            recovered = state
            incarnation = state.incarnation
        }
        var options = configuration.socketOptions
        if let authentication = configuration.authentication {
            let logger = self.logger
            authenticator = try await ZAPAuthenticator.start(
                context: context, allowedKeys: authentication.allowedKeys,
                onRefusal: { refusal in
                    logger.warning("refused a peer: its public key is not on the allow-list", metadata: [
                        "address": "\(refusal.address)", "key": "\(refusal.publicKey)",
                        "mechanism": "\(refusal.mechanism)", "refusals": "\(refusal.total)",
                    ])
                })
            options.curve = .server(authentication.keyPair)
        }
        let channel: SocketChannel
        do {
            channel = try await SocketChannel.open(
                context: context, kind: .router, options: options,
                bind: configuration.listen, name: "coordinator",
                onUnroutable: { [weak self] identity in
                    guard let self else { return }
                    Task { await self.peerUnreachable(PeerIdentity(identity)) }
                })
        } catch {
            await authenticator?.stop()
            authenticator = nil
            journal = nil  // releases the data directory's lock
            throw error
        }
        self.channel = channel
        logger.info("coordinator listening", metadata: [
            "endpoints": "\(configuration.listen)", "bound": "\(channel.boundEndpoint ?? "-")",
            "security": "\(configuration.authentication.map { "CurveZMQ, \($0.allowedKeys.count) keys allowed, public key \($0.keyPair.publicKey)" } ?? "none")",
        ])
        restore(recovered)
        background.append(Task { await self.receive(from: channel) })
        background.append(Task { await self.watchWorkers() })
        return channel.boundEndpoint
    }

    /// Stops serving: cancels every batch, closes the socket.
    public func stop() async {
        // The journal and the socket are let go first: the batches cancelled below are unfinished, not
        // cancelled, for the coordinator that starts next on this data directory and for their clients.
        flushJournal()
        journal = nil
        let closing = channel
        channel = nil
        for task in background { task.cancel() }
        background = []
        engine.cancelAll()
        for waiter in waiters.values { waiter.resume(throwing: CancellationError()) }
        waiters = [:]
        await closing?.close()
        await authenticator?.stop()
        authenticator = nil
    }

    /// Peers refused by the ZAP handler since the coordinator started (0 without CurveZMQ).
    public var authenticationRefusals: Int { authenticator?.refusals ?? 0 }

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
        case .heartbeat(let heartbeat):
            let (lost, out) = dispatcher.heartbeat(heartbeat, from: peer, now: now)
            if !lost.isEmpty {
                logger.warning("tasks whose assignment no worker could read failed", metadata: ["worker": "\(peer)", "tasks": "\(lost.count)"])
            }
            for result in lost { deliver(result) }
            send(out)
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
        case .fetchResults(let request):
            attach(peer, request)
        case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .batchAccepted, .itemFinished, .itemsFinished,
            .itemsAdded, .batchFinished, .statusReply, .refusal:
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
        flushJournal()
        channel.send(contentsOf: Outbound.coalesced(outbound).map { [$0.peer.bytes, WireCodec.encode($0.message)] })
    }

    /// Writes the journal's buffered records: what is about to be sent must be recorded first.
    private func flushJournal() {
        do {
            try journal?.flush()
        } catch {
            logger.error("could not write the journal; finished items would run again after a restart",
                         metadata: ["error": "\(error)"])
        }
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
    fileprivate nonisolated func run(
        _ assignment: TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey
    ) async throws -> TaskOutput {
        var keyed = assignment
        if keyed.taskKey == 0 { keyed.taskKey = RemoteTaskOperation.makeKey() }
        let assignment = keyed
        let call = RemoteCall()
        let inbox = remoteRequests
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                inbox.post(.run(assignment, priority: priority, wasWaiting: wasWaiting, dependentKey: dependentKey,
                                call: call, continuation)) {
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
                case .run(let assignment, let priority, let wasWaiting, let dependentKey, let call, let continuation):
                    if wasWaiting { waitingTasks -= 1 }
                    if call.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        continue
                    }
                    waiters[assignment.taskKey] = continuation
                    send(dispatcher.enqueue(assignment, priority: priority, dependentKey: dependentKey))
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
        if let reason = refusalReason(for: submit, from: client) {
            send([Outbound(peer: client, message: .refusal(Refusal(requestID: submit.requestID, reason: reason)))])
            return
        }
        let batchID = "b-" + UUID().uuidString.lowercased().prefix(8)
        let batch: BatchOperation
        do {
            batch = try plan(batchID: batchID, client: client, submit: submit)
            try journal?.recordAccepted(batchID: batchID, client: client.bytes, submit: submit)
        } catch {
            logger.error("batch refused", metadata: ["client": "\(client)", "error": "\(error)"])
            send([Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, reason: "the batch could not be accepted: \(error)")))])
            return
        }
        batchesAccepted += 1
        logger.info("batch accepted", metadata: ["batch": "\(batchID)", "client": "\(client)", "items": "\(batch.items.count)"])
        send([Outbound(peer: client, message: .batchAccepted(BatchAccepted(
            requestID: submit.requestID, batchID: batchID, itemCount: UInt32(batch.items.count),
            coordinatorID: dispatcher.coordinatorID)))])
        run(batch)
    }

    /// Why a submission is refused, or `nil` when it may be accepted.
    private func refusalReason(for submit: SubmitBatch, from client: PeerIdentity) -> String? {
        if submit.items.isEmpty {
            return "the batch has no items: give at least one image URL or path"
        }
        if submit.items.count > configuration.maxBatchItems {
            return "the batch has \(submit.items.count) items, more than this coordinator accepts in one batch "
                + "(\(configuration.maxBatchItems), its --max-batch-items): split it into smaller batches"
        }
        let pending = pendingItems[client, default: 0]
        if pending + submit.items.count > configuration.maxPendingItemsPerClient {
            return "this client already has \(pending) unfinished items and the batch would add \(submit.items.count), "
                + "more than this coordinator allows a client (\(configuration.maxPendingItemsPerClient), its "
                + "--max-pending-items-per-client): wait for earlier batches to finish, or submit fewer items"
        }
        return nil
    }

    /// Builds a batch's operations and registers it; `finished` items (from the journal) get none.
    private func plan(batchID: String, client: PeerIdentity, submit: SubmitBatch,
                      recovered: RecoveredBatch? = nil) throws -> BatchOperation {
        let parameters = submit.parameters ?? WireTiltShiftParameters(
            focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10)
        var parents: [Int: Int] = [:]
        for expansion in recovered?.expansions ?? [] {
            for offset in expansion.items.indices { parents[Int(expansion.firstIndex) + offset] = Int(expansion.parentIndex) }
        }
        let batch = try BatchOperation(
            batchID: batchID, client: client, sources: recovered?.allItems ?? submit.items, parameters: parameters,
            kind: submit.kind, maxDownloadsPerHost: configuration.maxDownloadsPerHost,
            finished: recovered?.finished.mapValues(\.outcome) ?? [:], parents: parents,
            firstAttempt: (incarnation - 1) * 1_000 + 1, runner: CoordinatorTaskRunner(coordinator: self),
            clientAcceptsBatches: submit.acceptsBatches)
        batches[batchID] = batch
        progress[batchID] = FinishedItems(itemCount: 0)
        track(batch.items, of: batch)
        return batch
    }

    /// Starts following items of `batch` (new, or added by a manifest): counts, and the hand-over of
    /// each finished one to `itemFinished`.
    private func track(_ items: some Collection<BatchOperation.Item>, of batch: BatchOperation) {
        progress[batch.batchID]?.grow(by: items.count)
        let inbox = finishedItemInbox
        var unfinished = 0
        for item in items {
            guard let last = item.last else {
                progress[batch.batchID]?.markFinished(item.index)
                continue
            }
            unfinished += 1
            waitingTasks += item.tasks.count
            // Gathered, then finished in groups by `finishItems()`: one task per burst, not per item.
            last.onCompletion { _ in
                inbox.post((item, batch)) { Task { await self.finishItems() } }
            }
        }
        pendingItems[batch.client, default: 0] += unfinished
    }

    private func run(_ batch: BatchOperation) {
        do {
            try engine.addOperation(batch)
        } catch {
            batch.cancel(error: error)
        }
    }

    /// Carries on with the batches a previous run of this coordinator had accepted and not finished.
    private func restore(_ recovered: RecoveredState) {
        if recovered.discardedBytes > 0 || recovered.skippedRecords > 0 {
            logger.warning("the journal had damaged records (a crash while writing?); they were skipped", metadata: [
                "bytes cut": "\(recovered.discardedBytes)", "records skipped": "\(recovered.skippedRecords)",
            ])
        }
        for saved in recovered.batches {
            let batch: BatchOperation
            do {
                batch = try plan(batchID: saved.batchID, client: PeerIdentity(saved.client), submit: saved.submit,
                                 recovered: saved)
            } catch {
                logger.error("a batch of the journal could not be planned again", metadata: [
                    "batch": "\(saved.batchID)", "error": "\(error)",
                ])
                continue
            }
            logger.info("batch restored from the journal", metadata: [
                "batch": "\(saved.batchID)", "items": "\(batch.items.count)", "finished": "\(saved.finished.count)",
            ])
            if saved.isComplete {
                retire(saved.batchID)
                continue
            }
            for request in saved.cancellations { apply(request, to: batch) }
            run(batch)
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
        guard let last = item.last, progress[batch.batchID]?.markFinished(item.index) == true else { return }
        var outcome: TaskOutcome
        if last.state == .finished, let output = last.takeOutput() {
            outcome = .output(output)
        } else {
            let failure = BatchOperation.failure(of: item)
            outcome = .failure(failure)
            logger.info("item failed", metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)", "error": "\(failure.message)"])
        }
        for task in item.tasks {
            task.releasePayloads()
            if task.claimStart() {
                // It never ran (cancelled, or its download failed): nothing waits for it, nor for a slot kept for it.
                waitingTasks -= 1
                send(dispatcher.release(task.template.taskKey))
            }
        }
        var messages: [Message] = []
        if case .output(let output) = outcome, output.mediaType == Manifest.mediaType {
            // A manifest: the batch grows by the images it lists, announced before the manifest's own result.
            do {
                let added = try expand(item, of: batch, listing: output)
                messages.append(.itemsAdded(added))
                outcome = .output(TaskOutput(data: [], mediaType: Manifest.mediaType))
            } catch {
                outcome = .failure(TaskFailure(code: .limit, message: "\(item.source): \(error)"))
            }
        }
        let finished = ItemFinished(
            batchID: batch.batchID, itemIndex: UInt32(item.index), outputName: item.outputName, outcome: outcome)
        do {
            // Before the client hears of it: what a client was told survives a crash of the coordinator.
            try journal?.recordFinished(finished)
        } catch {
            logger.error("could not record a finished item in the journal; it would run again after a restart",
                         metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)", "error": "\(error)"])
        }
        if journal != nil, case .output(let output) = outcome {
            progress[batch.batchID]?.noteOutput(output, of: item.index)
        }
        if let remaining = pendingItems[batch.client] {
            pendingItems[batch.client] = remaining > 1 ? remaining - 1 : nil
        }
        let audience = self.audience(of: batch)
        messages.append(.itemFinished(finished))
        if progress[batch.batchID]?.isComplete == true {
            batch.close()
            let counts = summary(of: batch)
            messages.append(.batchFinished(BatchFinished(
                batchID: batch.batchID, succeeded: counts.succeeded, failed: counts.failed, cancelled: counts.cancelled)))
            logger.info("batch finished", metadata: [
                "batch": "\(batch.batchID)", "succeeded": "\(counts.succeeded)", "failed": "\(counts.failed)",
                "cancelled": "\(counts.cancelled)",
            ])
            retire(batch.batchID)
        }
        send(audience.flatMap { peer in
            messages.map { message in
                var outbound = Outbound(peer: peer, message: message)
                if case .itemFinished = message { outbound.batchable = peer == batch.client && batch.clientAcceptsBatches }
                return outbound
            }
        })
    }

    /// Adds the images a manifest item lists to its batch, and records that in the journal.
    ///
    /// - Throws: `ManifestRefusal` when the manifest is nested too deep or would make the batch larger
    ///   than `maxBatchItems`; an engine error if the batch can no longer grow.
    private func expand(_ item: BatchOperation.Item, of batch: BatchOperation, listing manifest: TaskOutput) throws -> ItemsAdded {
        let entries = String(decoding: manifest.data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        guard item.depth < ClusterDefaults.maxManifestDepth else {
            throw ManifestRefusal("it is a manifest listed by a manifest \(item.depth) levels deep; manifests may nest "
                + "\(ClusterDefaults.maxManifestDepth) levels")
        }
        guard batch.items.count + entries.count <= configuration.maxBatchItems else {
            throw ManifestRefusal("this manifest lists \(entries.count) images, which would make the batch larger than "
                + "\(configuration.maxBatchItems) items (the coordinator's --max-batch-items): split the manifest")
        }
        let added = try batch.expand(item, into: entries)
        try journal?.recordItemsAdded(added)
        track(batch.items[Int(added.firstIndex)...], of: batch)
        logger.info("manifest expanded", metadata: [
            "batch": "\(batch.batchID)", "item": "\(item.index)", "added": "\(entries.count)",
        ])
        return added
    }

    /// The clients that receive a batch's results: its submitter and whoever attached since, except
    /// those still being sent the items finished before they attached.
    private func audience(of batch: BatchOperation) -> [PeerIdentity] {
        if subscribers.isEmpty && replaying.isEmpty { return [batch.client] }  // nobody attached: the common case
        let catchingUp = replaying[batch.batchID] ?? []
        var peers = catchingUp.contains(batch.client) ? [] : [batch.client]
        for peer in subscribers[batch.batchID] ?? [] where peer != batch.client && !catchingUp.contains(peer) {
            peers.append(peer)
        }
        return peers
    }

    // MARK: Attaching to a batch

    /// A client (re-)attaches to a batch: it is sent every item finished so far, then the rest as they
    /// finish (`FetchResults`). Needs the results directory of a journal.
    private func attach(_ peer: PeerIdentity, _ request: FetchResults) {
        guard let batch = batches[request.batchID] else {
            send([Outbound(peer: peer, message: .refusal(Refusal(requestID: request.requestID, reason:
                "no batch \(request.batchID): it is unknown to this coordinator (finished long ago, or accepted by a "
                + "coordinator that ran without --data-dir). `shiftwork status` lists the batches it knows.")))])
            return
        }
        guard journal != nil else {
            send([Outbound(peer: peer, message: .refusal(Refusal(requestID: request.requestID, reason:
                "this coordinator keeps no results to send again: start it with --data-dir DIR to fetch the results "
                + "of a batch later, or after a restart")))])
            return
        }
        guard replaying[batch.batchID]?.contains(peer) != true else { return }  // already catching up
        logger.info("client attached to a batch", metadata: ["batch": "\(batch.batchID)", "client": "\(peer)"])
        send([Outbound(peer: peer, message: .batchAccepted(BatchAccepted(
            requestID: request.requestID, batchID: batch.batchID, itemCount: UInt32(batch.items.count),
            coordinatorID: dispatcher.coordinatorID)))])
        replaying[batch.batchID, default: []].insert(peer)
        let announced = batch.items.count
        background.append(Task { await self.catchUp(peer, on: batch, announced: announced) })
    }

    /// Sends `peer` the batch's finished items (outputs read back from the results directory), a few
    /// at a time so that the socket's queue stays short, until it has them all; then it joins the
    /// batch's audience, and gets `BatchFinished` if the batch is done.
    private func catchUp(_ peer: PeerIdentity, on batch: BatchOperation, announced: Int) async {
        var sent = [Bool](repeating: false, count: batch.items.count)
        var announced = announced
        while let batchProgress = progress[batch.batchID] {
            if batch.items.count > announced {
                // Manifests added items since the client was told the batch's size.
                send(batch.items[announced...].additions(of: batch.batchID).map { Outbound(peer: peer, message: .itemsAdded($0)) })
                announced = batch.items.count
                sent += repeatElement(false, count: batch.items.count - sent.count)
            }
            let due = batchProgress.finishedIndexes(notIn: sent)
            if due.isEmpty { break }
            for index in due {
                sent[index] = true
                send([Outbound(peer: peer, message: .itemFinished(storedResult(of: batch.items[index], in: batch)))])
                while (channel?.queuedOutboundMessages ?? 0) > 64, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                }
                if Task.isCancelled { return }
            }
        }
        replaying[batch.batchID]?.remove(peer)
        if peer != batch.client { subscribers[batch.batchID, default: []].insert(peer) }
        if progress[batch.batchID]?.isComplete ?? true {
            let counts = summary(of: batch)
            send([Outbound(peer: peer, message: .batchFinished(BatchFinished(
                batchID: batch.batchID, succeeded: counts.succeeded, failed: counts.failed, cancelled: counts.cancelled)))])
        }
    }

    /// A finished item as the client was told, its output read back from the results directory.
    private func storedResult(of item: BatchOperation.Item, in batch: BatchOperation) -> ItemFinished {
        var outcome: TaskOutcome
        switch item.recorded {
        case .some(let recorded):
            outcome = recorded
        case nil:
            if case .finished? = item.last?.state {
                outcome = .output(progress[batch.batchID]?.output(of: item.index) ?? TaskOutput(data: []))
            } else {
                outcome = .failure(BatchOperation.failure(of: item))
            }
        }
        if case .output(var output) = outcome, !output.mediaType.isEmpty {
            do {
                output.data = try journal?.storedOutput(batchID: batch.batchID, itemIndex: UInt32(item.index)) ?? []
                outcome = .output(output)
            } catch {
                outcome = .failure(TaskFailure(code: .internal, message:
                    "the output was made but cannot be read back from the results directory: \(error.localizedDescription)"))
            }
        }
        return ItemFinished(batchID: batch.batchID, itemIndex: UInt32(item.index), outputName: item.outputName, outcome: outcome)
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
            progress[oldest] = nil
            subscribers[oldest] = nil
            do {
                try journal?.recordRetired(batchID: oldest)
            } catch {
                logger.error("could not record a retired batch in the journal", metadata: ["batch": "\(oldest)", "error": "\(error)"])
            }
        }
    }

    private func cancel(_ request: CancelBatch, from peer: PeerIdentity) {
        guard let batch = batches[request.batchID] else {
            send([Outbound(peer: peer, message: .refusal(Refusal(
                reason: "no batch \(request.batchID): `shiftwork status` lists the batches the coordinator knows")))])
            return
        }
        logger.info("cancelling", metadata: ["batch": "\(batch.batchID)", "items": "\(request.itemIndexes.isEmpty ? "all" : "\(request.itemIndexes)")"])
        do {
            try journal?.recordCancelled(request)
        } catch {
            logger.error("could not record a cancellation in the journal", metadata: ["batch": "\(batch.batchID)", "error": "\(error)"])
        }
        apply(request, to: batch)
    }

    /// Cancels the batch, or the items the request names.
    private func apply(_ request: CancelBatch, to batch: BatchOperation) {
        let reason = BatchCancelledError(batchID: batch.batchID)
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
        page.single("shiftwork_tasks_local_input_total", "counter",
                    "Tasks sent to the worker that already held their input (it did not travel).",
                    Double(dispatcher.localInputs))
        page.single("shiftwork_tasks_local_input_missed_total", "counter",
                    "Of those, tasks whose input the worker no longer had, sent again with the bytes.",
                    Double(dispatcher.localInputsMissed))
        page.single("shiftwork_assignments_lost_total", "counter",
                    "Assignments a worker did not receive whole (found through its heartbeats) and queued again.",
                    Double(dispatcher.lostDeliveries))
        page.single("shiftwork_messages_dropped_total", "counter",
                    "Messages dropped: malformed, from the wrong kind of peer, or answering an attempt that is no longer current.",
                    Double(droppedMessages + dispatcher.staleResults))
        if let authenticator {
            page.single("shiftwork_peers_refused_total", "counter",
                        "Connections refused by CurveZMQ authentication (public key not on the allow-list).",
                        Double(authenticator.refusals))
        }
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
                    lastSeenMsAgo: Self.milliseconds(now - worker.lastSeen), droppedMessages: worker.droppedMessages,
                    version: worker.version)
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
            tasksPerSecond: dispatcher.tasksPerSecond(now: now), coordinatorID: dispatcher.coordinatorID)
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
    func run(_ assignment: TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey) async throws -> TaskOutput {
        try await coordinator.run(assignment, priority: priority, wasWaiting: wasWaiting, dependentKey: dependentKey)
    }
}

extension Collection where Element == BatchOperation.Item {
    /// These items as `ItemsAdded` announcements, one per run of items added by the same manifest.
    func additions(of batchID: String) -> [ItemsAdded] {
        var result: [ItemsAdded] = []
        for item in self {
            let entry = BatchItem(source: item.source, outputName: item.outputName)
            if let last = result.last, Int(last.parentIndex) == item.parent ?? -1,
               Int(last.firstIndex) + last.items.count == item.index {
                result[result.count - 1].items.append(entry)
            } else {
                result.append(ItemsAdded(batchID: batchID, parentIndex: UInt32(item.parent ?? 0),
                                         firstIndex: UInt32(item.index), items: [entry]))
            }
        }
        return result
    }
}
