import Foundation
import Logging
import Messaging
import Prometheus
import Wire

/// The coordinator: accepts batches from clients, runs each item's tasks (a download, and a tilt-shift
/// into which the download's output is injected), hands them to workers as they have free slots, and
/// streams every item's result to its client.
///
/// Every decision is the `CoordinatorCore`'s, a value free of I/O that owns the `Dispatcher` (which
/// worker runs what), the `BatchRegistry` (what each client is told) and each batch's running items. The
/// actor keeps the I/O: it turns what arrives into `CoreEvent`s and carries out the `CoreEffect`s that
/// come back, in order (`Coordinator+Effects`). Its other extensions hold the rest, one concept a file:
/// submissions and restarts (`Coordinator+Batches`), clients that re-attach (`Coordinator+Replay`),
/// access, bounds and worker bindings; `StatusReport` and `MetricsReport` build the reports. One ROUTER
/// socket serves clients and workers alike; the message type tells them apart.
///
/// With a data directory, accepted batches, finished items and cancellations go into a `Journal`
/// before anyone is told of them; a coordinator restarted on the same directory runs what was left
/// and serves the finished results again (`FetchResults`).
///
/// A `Service` (see `Coordinator+Service`): in a `ServiceGroup` it serves until the group shuts down.
public actor Coordinator {
    /// The coordinator's own thread, which also owns its ROUTER socket: its jobs (dispatch, journal writes
    /// and syncs, replies) run there, so a journal `fdatasync` never holds a thread of Swift's cooperative
    /// pool; received messages are handed to it there, in groups, between jobs (`receive`), the liveness
    /// tick fires there (`tick`), and what it sends goes to libzmq at once.
    nonisolated let executor: PolledSocketExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let configuration: CoordinatorConfiguration
    let context: MessagingContext
    /// Whether `context` is this coordinator's own, terminated by `stop()`.
    private let ownsContext: Bool
    /// The metrics of `metrics()`, recorded into `metricsRegistry`.
    private var recordedMetrics: CoordinatorMetrics
    /// The registry the coordinator's metrics are recorded in (one per coordinator).
    public nonisolated let metricsRegistry: PrometheusCollectorRegistry
    let logger: Logger
    /// Every decision: the dispatcher, the batch registry, each batch's running items.
    var core: CoordinatorCore
    /// Which worker runs which task, and who is alive (the core's).
    var dispatcher: Dispatcher {
        get { core.dispatcher }
        _modify { yield &core.dispatcher }
    }
    /// The batches as clients see them: items, outcomes, audiences (the core's).
    var registry: BatchRegistry {
        get { core.registry }
        _modify { yield &core.registry }
    }
    /// The ROUTER socket is open (between `start()` and `stop()`); it lives on `executor`'s thread.
    private(set) var isServing = false
    /// The ZAP handler, when CurveZMQ is on.
    private var authenticator: ZAPAuthenticator?
    /// Clients being sent the finished items of a batch they attached to (`Coordinator+Replay`).
    var catchingUp = CatchUpQueue()
    /// The durable state, with a data directory.
    var journal: Journal?
    /// Roles of the admitted keys, owners of batches, refusals (`Coordinator+Access`).
    var access: AccessControl
    /// Messages that could not be decoded or came from the wrong kind of peer.
    var droppedMessages: UInt64 = 0
    /// Messages refused for a field out of bounds (`Coordinator+Bounds`), by field.
    var refusedMessages: [String: UInt64] = [:]
    /// Rate-limits log lines that peers can cause in bulk (malformed messages, failed items).
    var logThrottle = LogThrottle()
    /// While the messages of one socket wake-up are handled: what to send, sent together at the end.
    private var outbox: [Outbound]?
    /// When workers' silence is judged: only once the messages received before the liveness tick are
    /// handled, so that a coordinator behind on its messages never declares a live worker dead.
    private var liveness = LivenessCheckpoint()

    /// One of a pair (`--ha`): the rules, the journal stream and the link (`Coordinator+Pair`).
    var pairing: PairSession?

    /// Tasks accepted and not started: waiting for a worker slot, or to be dispatched at all.
    var queuedTaskCount: Int { core.queuedTaskCount }

    /// Creates a coordinator with a ZeroMQ context of its own, which `stop()` ends.
    ///
    /// - Parameter metricsRegistry: where its metrics are recorded; by default a registry of its own.
    /// - Throws: `ZeroMQError` when libzmq cannot create a context, or the process its thread's `eventfd`.
    public init(
        configuration: CoordinatorConfiguration, logger: Logger,
        metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) throws {
        try self.init(
            configuration: configuration, context: try MessagingContext(), ownsContext: true, logger: logger,
            metricsRegistry: metricsRegistry)
    }

    /// Creates a coordinator that binds within `context`, which stays the caller's to terminate (shared
    /// with workers in the same process for `inproc://`, as `EmbeddedCluster` does).
    ///
    /// - Throws: `ZeroMQError` when the process cannot create its thread's `eventfd` (out of descriptors).
    package init(
        configuration: CoordinatorConfiguration, context: MessagingContext, logger: Logger,
        metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) throws {
        try self.init(
            configuration: configuration, context: context, ownsContext: false, logger: logger,
            metricsRegistry: metricsRegistry)
    }

    private init(
        configuration: CoordinatorConfiguration, context: MessagingContext, ownsContext: Bool, logger: Logger,
        metricsRegistry: PrometheusCollectorRegistry
    ) throws {
        self.executor = try PolledSocketExecutor(name: "coordinator")
        self.configuration = configuration
        self.context = context
        self.ownsContext = ownsContext
        self.logger = logger
        self.metricsRegistry = metricsRegistry
        self.recordedMetrics = CoordinatorMetrics(registry: metricsRegistry)
        self.access = AccessControl(roles: configuration.authentication?.roles)
        self.core = Self.makeCore(configuration)
    }

    /// A core that knows nothing yet (a start, or a coordinator of a pair that steps down).
    static func makeCore(_ configuration: CoordinatorConfiguration) -> CoordinatorCore {
        let dispatcher = Dispatcher(
            heartbeatInterval: configuration.heartbeatInterval, workerTimeout: configuration.workerTimeout,
            coordinatorID: "coordinator-" + UUID().uuidString.lowercased().prefix(8),
            maxMessageBytes: UInt64(max(0, configuration.socketOptions.maxMessageSize)),
            scheduling: configuration.scheduling)
        let registry = BatchRegistry(
            limits: BatchRegistry.Limits(
                maxBatchItems: configuration.maxBatchItems,
                maxPendingItemsPerClient: configuration.maxPendingItemsPerClient,
                maxQueuedItemsPerClient: configuration.maxQueuedItemsPerClient,
                maxBatchesPerClient: configuration.maxBatchesPerClient),
            keepsResults: configuration.dataDirectory != nil, retention: configuration.retention)
        return CoordinatorCore(
            dispatcher: dispatcher, registry: registry,
            settings: CoordinatorCore.Settings(
                maxDownloadsPerHost: configuration.maxDownloadsPerHost, scheduling: configuration.scheduling,
                taskTimeout: configuration.taskTimeout, seed: UInt64.random(in: 0...UInt64.max),
                uploadWindowBytes: configuration.uploadWindowBytes, spoolsUploads: configuration.dataDirectory != nil))
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
            let (journal, state) = try Journal.open(
                directory: directory, coordinatorID: dispatcher.coordinatorID, paired: configuration.pair != nil)
            self.journal = journal
            recovered = state
            core.settings.incarnation = state.incarnation
        }
        var options = configuration.socketOptions
        if let authentication = configuration.authentication {
            let logger = self.logger
            authenticator = try await ZAPAuthenticator.start(
                context: context, allowedKeys: authentication.allowedKeys.union(pairKeys),
                onRefusal: { refusal in
                    logger.warning(
                        "refused a peer: its public key is not on the allow-list",
                        metadata: [
                            "address": "\(refusal.address)", "key": "\(refusal.publicKey)",
                            "mechanism": "\(refusal.mechanism)", "refusals": "\(refusal.total)",
                        ])
                })
            options.curve = .server(authentication.keyPair)
        }
        let boundEndpoint: String?
        do {
            // The handlers run on the executor's thread between jobs: the actor's own.
            boundEndpoint = try executor.openSocket(
                context: context, kind: .router, options: options, bind: configuration.listen, appendsPeerKey: true,
                onMessages: { [weak self] received in self?.assumeIsolated { $0.receive(received) } },
                onUnroutable: { [weak self] identity in
                    self?.assumeIsolated { $0.peerUnreachable(PeerIdentity(identity)) }
                })
        } catch {
            await authenticator?.stop()
            authenticator = nil
            journal = nil  // releases the data directory's lock
            throw error
        }
        isServing = true
        logger.info(
            "coordinator listening",
            metadata: [
                "endpoints": "\(configuration.listen)", "bound": "\(boundEndpoint ?? "-")",
                "security":
                    "\(configuration.authentication.map { "CurveZMQ, \($0.allowedKeys.count) keys allowed, public key \($0.keyPair.publicKey)" } ?? "none")",
            ])
        if let pair = configuration.pair {
            do {
                let service = boundEndpoint ?? configuration.listen.first ?? ""
                try await startPair(pair, recovered: recovered, serviceEndpoint: service)
            } catch {
                await stop()
                throw error
            }
        } else {
            restore(recovered)
        }
        executor.startTimer(every: configuration.heartbeatInterval) { [weak self] in
            self?.assumeIsolated { $0.tick() }
        }
        return boundEndpoint
    }

    /// Stops serving: cancels every batch, closes the socket (and ends its own ZeroMQ context).
    ///
    /// The batches are left unfinished, not cancelled: a coordinator started next on the same data
    /// directory carries on with them.
    public func stop() async {
        await stopPair()
        // The journal and the socket are let go first: the batches cancelled below are unfinished, not
        // cancelled, for the coordinator that starts next on this data directory and for their clients.
        flushJournal()
        journal = nil
        isServing = false
        executor.stopTimer()
        executor.cancelScheduledCalls()
        catchingUp = CatchUpQueue()
        // What was sent is handed to libzmq, which delivers it within the socket's linger.
        executor.closeSocket()
        await authenticator?.stop()
        authenticator = nil
        if ownsContext, await !context.terminate() {
            logger.warning(
                "left without waiting for ZeroMQ to finish closing: it still waits on the network",
                metadata: ["waited": "\(MessagingContext.defaultTerminationWait)"])
        }
    }

    /// Has the ZAP handler admit `keys` from now on (`applyAllowLists`).
    func replaceAdmittedKeys(_ keys: Set<CurvePublicKey>) {
        authenticator?.replaceAllowedKeys(keys)
    }

    /// Peers refused by the ZAP handler since the coordinator started (0 without CurveZMQ).
    public var authenticationRefusals: Int { authenticator?.refusals ?? 0 }

    /// `authenticationRefusals`, or `nil` without CurveZMQ (the metric is then left out).
    var authenticationRefusalsIfAuthenticating: Int? { authenticator?.refusals }

    /// Counters and gauges in Prometheus' text format, for `MetricsServer` (`--metrics-listen`): the
    /// figures as they stand are recorded into `metricsRegistry` and the registry is rendered.
    public func metrics() -> String {
        recordedMetrics.record(MetricsReport(coordinator: self, now: .now))
        return recordedMetrics.text
    }

    // MARK: Messages

    /// Handles the messages the socket held when its thread looked, in the order they came (a worker's
    /// results before its heartbeat, which the lost-assignment check relies on), sending what they
    /// produce together; a liveness check waiting for the coordinator to catch up runs as soon as no
    /// message received before it waits unread (`LivenessCheckpoint`).
    private func receive(_ received: [[[UInt8]]]) {
        sendingTogether { for frames in received { handle(frames) } }
        if liveness.isBehind, let instant = liveness.handledMessages(caughtUp: !executor.hasUnreadMessages) {
            judgeSilence(asOf: instant)
        }
    }

    private func handle(_ frames: [[UInt8]]) {
        guard let (sender, envelope) = MessageSender.split(frames) else {
            droppedMessages += 1
            logger.debug("dropped a message with \(frames.count - 1) frames (expected identity + envelope)")
            return
        }
        let peer = sender.identity
        let message: Message
        var witnessed: WirePairPosition?  // set only by the workers and clients of a pair (docs/failover.md)
        do {
            message = try WireCodec.decode(envelope, witnessed: &witnessed)
        } catch {
            droppedMessages += 1
            if logThrottle.admit("dropped a malformed message", now: .now) {
                logger.warning("dropped a malformed message", metadata: ["peer": "\(peer)", "error": "\(error)"])
            }
            if case .unsupportedMajorVersion = error {
                send([
                    Outbound(
                        peer: peer, message: .refusal(Refusal(code: .unsupportedVersion, reason: error.description)))
                ])
            }
            return
        }
        let now = ContinuousClock.now
        guard isWithinBounds(message, from: sender, now: now), let scope = authorize(message, from: sender),
            speaksForSender(message, from: sender), pairAdmits(message, witnessed: witnessed, from: sender, now: now)
        else { return }
        switch message {
        case .workerHello(let hello):
            apply(.workerHello(hello, from: sender), now: now)
        case .heartbeat(let heartbeat):
            apply(.heartbeat(heartbeat, from: peer), now: now)
        case .workerGoodbye(let goodbye):
            apply(.workerGoodbye(goodbye, from: peer), now: now)
        case .taskResult(let result):
            if isSendersResult(result, from: sender) { apply(.results([result], from: peer), now: now) }
        case .taskResults(let results):
            let own = results.filter { isSendersResult($0, from: sender) }
            if !own.isEmpty { apply(.results(own, from: peer), now: now) }
        case .submitBatch(let submit):
            accept(submit, from: sender)
        case .statusRequest(let request):
            send([
                Outbound(
                    peer: peer, message: StatusReport(coordinator: self, now: now, scope: scope).answer(to: request))
            ])
        case .cancelBatch(let request):
            apply(.cancel(request, from: peer), now: now)
        case .fetchResults(let request):
            attach(peer, request)
        case .retryBatch(let request):
            apply(.retryBatch(request, from: peer), now: now)
        case .taskGivenBack(let answer):
            apply(.taskGivenBack(answer, from: peer), now: now)
        case .uploadData(let upload):
            apply(.uploadData(upload, from: peer), now: now)
        case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .giveBackTask, .batchAccepted, .itemFinished,
            .itemsFinished,
            .itemsAdded, .batchFinished, .statusReply, .cancelAccepted, .retryAccepted, .refusal, .uploadRequest:
            droppedMessages += 1  // only the coordinator sends these
        case .pairAnnouncement, .pairJournal, .pairHeld, .pairResultFile, .pairSnapshot:
            droppedMessages += 1  // only on the pair's own link
        }
    }

    /// Sends `outbound` (while a wake-up's messages are handled: at its end), batchable messages to one
    /// peer grouped, straight to libzmq (the socket lives on this actor's thread). What the journal holds
    /// is written first: what is sent must be recorded first.
    ///
    /// `following`: the journal's position when the messages follow a record written for them (the
    /// active coordinator of a pair holds them until its peer holds that record, `AcknowledgementGate`).
    func send(_ outbound: [Outbound], following: JournalPosition? = nil) {
        guard !outbound.isEmpty else { return }
        deliver(gated(outbound, following: following))
    }

    /// Sends `outbound` past the pair's gate (what it released, or what it let through).
    func deliver(_ outbound: [Outbound]) {
        guard !outbound.isEmpty else { return }
        if outbox != nil {
            outbox! += outbound
            return
        }
        guard isServing else { return }
        flushJournal()
        streamJournal()
        let witnessed = pairing == nil ? nil : witnessedStamp()
        executor.send(
            contentsOf: Outbound.coalesced(outbound).lazy.map {
                [$0.peer.bytes, WireCodec.encode($0.message, witnessed: witnessed)]
            })
    }

    /// Writes the journal's buffered records: what is about to be sent must be recorded first.
    func flushJournal() {
        do {
            try journal?.flush()
        } catch {
            logger.error(
                "could not write the journal; finished items would run again after a restart",
                metadata: ["error": "\(error)"])
        }
    }

    /// Runs `body` with every `send` in it held back and sent together at its end.
    func sendingTogether(_ body: () -> Void) {
        guard outbox == nil else { return body() }
        outbox = []
        body()
        let out = outbox ?? []
        outbox = nil
        deliver(out)
        streamJournal()
    }

    // MARK: Liveness

    /// A message could not be delivered to `peer`: if it is a worker, its connection is gone.
    private func peerUnreachable(_ peer: PeerIdentity) {
        apply(.peerUnreachable(peer))
    }

    /// Every heartbeat interval, on the coordinator's thread (its socket's poll times out for it): throttled
    /// log lines, finished batches past their retention, workers' and tasks' silence, batch deadlines.
    private func tick() {
        logger.logSuppressed(logThrottle.expired(now: .now), window: logThrottle.window)
        sendingTogether {
            if let instant = liveness.timerFired(caughtUp: !executor.hasUnreadMessages, now: .now) {
                judgeSilence(asOf: instant)
            }
            apply(.tick)
            pairTick()
        }
        AllocatorTrim.trimIfRequested(idle: registry.runningBatchCount == 0, now: .now)
    }

    /// Judges silence as of `instant`, once every message received before it has been handled
    /// (`LivenessCheckpoint`): workers silent for longer than the worker timeout are declared dead (their
    /// tasks' attempts are lost and retried as their batches allow), and task attempts unanswered for
    /// longer than the task timeout are cancelled. A heartbeat or a result that waited unread in the
    /// socket while the coordinator was behind counts: neither a live worker nor an answered task is
    /// taken for lost, and no task is sent twice for the coordinator's own backlog.
    private func judgeSilence(asOf instant: ContinuousClock.Instant) {
        sendingTogether { apply(.judgeSilence, now: instant) }
    }
}
