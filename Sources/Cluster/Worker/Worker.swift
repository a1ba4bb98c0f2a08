import Fetching
import Foundation
import Imaging
import Logging
import Messaging
import Operations
import Runtime
import ServiceLifecycle
import Wire

/// A worker: connects to the coordinator, says hello with its slots, heartbeats, runs the download and
/// tilt-shift tasks it is sent and answers each with its result.
///
/// A worker the coordinator does not know (after a coordinator restart, or after it was declared dead)
/// is told so on its next heartbeat and registers again by itself. Given several coordinators (a pair), it
/// turns to the next one when its own is silent and registers there (`Worker+Turning.swift`).
///
/// A `Service`: in a `ServiceGroup`, its graceful shutdown is `drain` (finish running tasks, take no new
/// ones, say goodbye); cancellation (the group's deadline, a second signal) is `stop`.
public actor Worker: Service {
    let configuration: WorkerConfiguration
    let context: MessagingContext
    /// Whether `context` is this worker's own, terminated when `run()` ends.
    private let ownsContext: Bool
    let logger: Logger
    let fetcher: ImageFetcher
    /// Runs the assigned tasks, at most `slots` at once (the coordinator never sends more).
    let queue: WorkQueue
    /// `configuration.computeThreads` threads for the CPU-bound part of tasks (decode, filter, encode), so that
    /// Swift's cooperative pool, which runs this actor, its heartbeats and its socket bridge, never waits
    /// behind an image. By default half the slots: the other slots' downloads and sink writes overlap with them.
    let computeThreads: ComputeThreads
    /// Threads for the sinks' blocking work (write, `fsync`, rename; the CRC-32C of an upload), so that a
    /// compute thread starts the next image while the last one's output is made durable.
    let sinkThreads: ComputeThreads
    var channel: SocketChannel?
    /// Which of `configuration.coordinators` the worker is connected to (it turns round-robin on silence).
    var coordinatorIndex = 0
    /// With several coordinators: when to turn to the next (`Worker+Turning.swift`); `nil` with one.
    var watch: CoordinatorWatch?
    /// Counts the sockets the worker opened (one per turn), to tell the current one's connection events.
    var connectionGeneration = 0
    /// Whether a turn to the next coordinator is under way (its socket opening).
    var isTurning = false
    /// The socket options and handshake watcher every connection (the first, and each turn) opens with.
    var connectionOptions = SocketOptions()
    var onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
    var running: [String: AssignedTask] = [:]
    /// Tasks replaced in `running` by a later assignment with the same task ID (a new attempt, or a peer's
    /// duplicate): cancelled, and still answered when they end, by their operation.
    var superseded: [ObjectIdentifier: AssignedTask] = [:]
    /// The highest `TaskAssignment.sequence` received since the last welcome; heartbeats report it, with
    /// the tasks held, so that the coordinator finds assignments lost on the way.
    var lastSequence: UInt64 = 0
    /// Downloaded images waiting for their tilt-shift on this worker.
    var inputCache: InputCache
    /// The largest message the coordinator accepts, as its welcome said.
    var coordinatorMaxMessageBytes: Int64?
    /// Messages from the coordinator that were dropped (malformed, or meant for clients); sent in heartbeats.
    var droppedMessages: UInt64 = 0
    /// The furthest journal position an active coordinator of a pair sent this worker, kept across turns and
    /// registrations and said back on its hellos and heartbeats (docs/failover.md, "The witnessed position").
    var witnessed = WitnessedPosition()
    /// Rate-limits the warning about malformed messages, which a hostile peer can send by the thousand.
    var logThrottle = LogThrottle()
    var heartbeatInterval = ClusterDefaults.heartbeatInterval
    var isStopping = false
    var isDraining = false
    /// `drain` waiting for the last running task to finish (resumed then, or by `stop`).
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// The tasks `stop()` found running and cancelled.
    var tasksAbandoned = 0
    /// When the hello that awaits its welcome was sent; `nil` once welcomed.
    var helloSentAt: ContinuousClock.Instant?
    /// Why the worker stopped on its own, when the coordinator refused its handshake.
    private var refusal: WorkerError?
    /// Whether a `Welcome` arrived since the worker started.
    var isRegistered = false
    /// How long to wait for the first `Welcome` before warning that nothing answers.
    let welcomeWarningDelay: Duration = .seconds(10)
    /// Results produced while handling the messages of one wake-up, sent together at its end.
    var pendingResults: [TaskResult] = []
    /// Whether the coordinator takes several results in one message (its `Welcome` said so).
    var coordinatorAcceptsBatches = false
    /// What reaches the worker's loop from elsewhere (finished tasks, refused handshakes, a graceful
    /// shutdown): `inbox` posts, `serve()` consumes `events`.
    let inbox: AsyncStream<WorkerEvent>.Continuation
    private let events: AsyncStream<WorkerEvent>

    /// Creates a worker with a ZeroMQ context of its own, ended when `run()` returns.
    ///
    /// - Throws: `ZeroMQError` when libzmq cannot create a context.
    public init(configuration: WorkerConfiguration, logger: Logger) throws {
        self.init(configuration: configuration, context: try MessagingContext(), ownsContext: true, logger: logger)
    }

    /// Creates a worker that connects within `context`, which stays the caller's to terminate (share the
    /// coordinator's for `inproc://`, as `EmbeddedCluster` does).
    package init(configuration: WorkerConfiguration, context: MessagingContext, logger: Logger) {
        self.init(configuration: configuration, context: context, ownsContext: false, logger: logger)
    }

    private init(configuration: WorkerConfiguration, context: MessagingContext, ownsContext: Bool, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.ownsContext = ownsContext
        self.logger = logger
        self.fetcher = ImageFetcher(configuration: configuration.fetch)
        self.queue = WorkQueue(name: "worker tasks", maxConcurrentOperationCount: configuration.slots)
        self.computeThreads = ComputeThreads(name: "compute", count: configuration.computeThreads)
        self.sinkThreads = ComputeThreads(name: "sink io", count: min(configuration.slots, Self.maxSinkThreads))
        self.inputCache = InputCache(capacityBytes: configuration.inputCacheBytes)
        (self.events, self.inbox) = AsyncStream<WorkerEvent>.makeStream()
    }

    /// Connects, registers and serves tasks until `stop()` or `drain` ends it, the surrounding task is
    /// cancelled (which stops it) or its `ServiceGroup` shuts down gracefully (which drains it).
    ///
    /// - Throws: `ZeroMQError` when the endpoint is malformed; `WorkerError` when the coordinator
    ///   refuses this worker for good (another protocol version).
    public func run() async throws {
        do {
            try await serve()
        } catch {
            await releaseOwnContext()
            throw error
        }
        await releaseOwnContext()
    }

    /// With a context of its own: makes sure the socket is closed, then ends the context, waiting for
    /// libzmq only as long as the socket's linger and as long again (`MessagingContext.defaultTerminationWait`),
    /// so that a worker always stops soon, whatever its coordinator or the network is doing.
    private func releaseOwnContext() async {
        guard ownsContext else { return }
        await stop()
        if await !context.terminate() {
            logger.warning(
                "leaving without waiting for ZeroMQ to finish: it still waits on the network (reconnecting to the coordinator, e.g. a DNS lookup of its name that no server answers any more)",
                metadata: [
                    "coordinator": "\(PrintableText.escape(currentCoordinator))",
                    "waited": "\(MessagingContext.defaultTerminationWait)",
                ])
        }
    }

    /// Serves in one task group: the socket's reader, the heartbeat and the welcome watch are its children;
    /// its own loop consumes the inbox (finished tasks, refused handshakes, a graceful shutdown, which
    /// starts `drain` as a child). When the socket closes (`stop`, the end of `drain`, a refusal) or
    /// `run()` is cancelled, the loop ends, the worker stops, and the children are cancelled and awaited.
    private func serve() async throws {
        var options = configuration.socketOptions
        options.identity = Array(configuration.workerID.utf8)
        connectionOptions = options
        if options.curve != nil {
            onHandshakeFailure = { [inbox] failure in inbox.yield(.handshakeFailed(failure)) }
        }
        if configuration.coordinators.canTurn {
            watch = CoordinatorWatch(
                endpointCount: configuration.coordinators.all.count,
                silenceTimeout: configuration.coordinatorSilenceTimeout, now: .now)
        }
        self.channel = try await openChannel(to: currentCoordinator)
        logger.info(
            "worker connecting",
            metadata: [
                "coordinator": "\(configuration.coordinators)",
                "worker": "\(configuration.workerID)",
                "slots": "\(configuration.slots)",
                "compute_threads": "\(configuration.computeThreads)",
            ])
        sayHello()
        let usingKeys = options.curve != nil
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await self.read() }
                group.addTask { await self.heartbeat() }
                if configuration.coordinators.canTurn { group.addTask { await self.watchCoordinator() } }
                group.addTask { await self.warnUnlessWelcomed(usingKeys: usingKeys) }
                // Ends when the reader ends (it finishes the inbox) or `run()` is cancelled.
                for await event in events {
                    switch event {
                    case .taskFinished(let task, let result): finished(task, result)
                    case .handshakeFailed(let failure): await handshakeFailed(failure)
                    case .connection(let event, let generation): connectionChanged(event, generation: generation)
                    case .turnDue: await turnIfDue()
                    case .drainRequested: group.addTask { await self.drain() }
                    }
                }
                // Leave as `stop()` does (socket, downloads, threads): cancelled, refused, or stopped already.
                await stop()
                group.cancelAll()
            }
        } onGracefulShutdown: { [inbox] in
            inbox.yield(.drainRequested)
        }
        if let refusal { throw refusal }
    }

    /// Handles what the socket receives until it is closed, sending the results each wake-up produced at
    /// its end, and goes on with the socket that replaced it when the worker turned to another coordinator;
    /// then ends the inbox, which ends `serve()`'s loop. Throws when the coordinator refuses this worker for good.
    private func read() async throws {
        defer { inbox.finish() }
        var reading = channel
        while let current = reading {
            // Messages of a socket the worker turned away from are dropped unread.
            for await received in current.messageBatches where channel === current {
                defer { flushResults() }
                for frames in received { try handle(frames) }
            }
            reading = channel(replacing: current)
        }
    }

    /// The coordinator refused this worker's CurveZMQ handshake: a worker whose key is not listed would
    /// be refused at every reconnect, so it stops and says why.
    func handshakeFailed(_ failure: HandshakeFailure) async {
        if case .unspecified = failure.reason {
            // Often a connection that broke mid-handshake (the coordinator restarting): libzmq retries.
            logger.warning("handshake with the coordinator failed; retrying", metadata: ["failure": "\(failure)"])
            return
        }
        guard refusal == nil, !isStopping else { return }
        let error = WorkerError.notAuthorized(
            ClusterSecurityHint.refused(
                endpoint: currentCoordinator, failure: failure, peer: "worker"))
        refusal = error
        logger.error("the coordinator refused this worker", metadata: ["failure": "\(failure)"])
        await stop()
    }

    /// What the worker's health endpoint reports: registered (welcomed, and no hello awaiting an answer),
    /// draining, stopping, tasks running.
    public var health: WorkerHealth {
        WorkerHealth(
            registered: isRegistered && helloSentAt == nil, draining: isDraining, stopping: isStopping,
            running: running.count)
    }

    /// Leaves the cluster now: cancels running tasks, tells the coordinator (which queues them again
    /// elsewhere) and closes the socket.
    public func stop() async {
        guard !isStopping else { return }
        isStopping = true
        tasksAbandoned = running.count
        wakeIdleWaiters()
        for task in running.values {
            task.log.debug("cancelling the task: the worker is stopping")
            task.operation.cancel()
        }
        send(.workerGoodbye(WorkerGoodbye(workerID: configuration.workerID)))
        await channel?.close()
        await fetcher.shutdown()
        computeThreads.shutdown()
        sinkThreads.shutdown()
    }

    /// The most threads a worker writes to sinks with (each mostly waits for `fsync` or the network).
    static let maxSinkThreads = 8

    /// Sends a message to the coordinator (dropped and counted once the socket is closed), with the witnessed
    /// position when it has one.
    func send(_ message: Message) {
        channel?.send([WireCodec.encode(message, witnessed: witnessed.wire)])
    }
}
