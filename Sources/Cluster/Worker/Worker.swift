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
/// is told so on its next heartbeat and registers again by itself.
///
/// A `Service`: in a `ServiceGroup`, its graceful shutdown is `drain` (finish running tasks, take no new
/// ones, say goodbye); cancellation (the group's deadline, a second signal) is `stop`.
public actor Worker: Service {
    let configuration: WorkerConfiguration
    private let context: MessagingContext
    /// Whether `context` is this worker's own, terminated when `run()` ends.
    private let ownsContext: Bool
    let logger: Logger
    private let fetcher: ImageFetcher
    /// Runs the assigned tasks, at most `slots` at once (the coordinator never sends more).
    private let queue: WorkQueue
    /// `configuration.computeThreads` threads for the CPU-bound part of tasks (decode, filter, encode), so that
    /// Swift's cooperative pool, which runs this actor, its heartbeats and its socket bridge, never waits
    /// behind an image. By default half the slots: the other slots' downloads and sink writes overlap with them.
    private let computeThreads: ComputeThreads
    /// Threads for the sinks' blocking work (write, `fsync`, rename; the CRC-32C of an upload), so that a
    /// compute thread starts the next image while the last one's output is made durable.
    private let sinkThreads: ComputeThreads
    private var channel: SocketChannel?
    var running: [String: AssignedTask] = [:]
    /// Tasks replaced in `running` by a later assignment with the same task ID (a new attempt, or a peer's
    /// duplicate): cancelled, and still answered when they end, by their operation.
    private var superseded: [ObjectIdentifier: AssignedTask] = [:]
    /// The highest `TaskAssignment.sequence` received since the last welcome; heartbeats report it, with
    /// the tasks held, so that the coordinator finds assignments lost on the way.
    private var lastSequence: UInt64 = 0
    /// Downloaded images waiting for their tilt-shift on this worker.
    private var inputCache: InputCache
    /// The largest message the coordinator accepts, as its welcome said.
    private var coordinatorMaxMessageBytes: Int64?
    /// Messages from the coordinator that were dropped (malformed, or meant for clients); sent in heartbeats.
    private var droppedMessages: UInt64 = 0
    /// Rate-limits the warning about malformed messages, which a hostile peer can send by the thousand.
    private var logThrottle = LogThrottle()
    private var heartbeatInterval = ClusterDefaults.heartbeatInterval
    private var heartbeatTask: Task<Void, Never>?
    var isStopping = false
    var isDraining = false
    /// `drain` waiting for the last running task to finish (resumed then, or by `stop`).
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// The tasks `stop()` found running and cancelled.
    var tasksAbandoned = 0
    /// When the hello that awaits its welcome was sent; `nil` once welcomed.
    private var helloSentAt: ContinuousClock.Instant?
    /// Why the worker stopped on its own, when the coordinator refused its handshake.
    private var refusal: WorkerError?
    /// Whether a `Welcome` arrived since the worker started.
    private var isRegistered = false
    /// How long to wait for the first `Welcome` before warning that nothing answers.
    private let welcomeWarningDelay: Duration = .seconds(10)
    /// Results produced while handling the messages of one wake-up, sent together at its end.
    private var pendingResults: [TaskResult] = []
    /// Whether the coordinator takes several results in one message (its `Welcome` said so).
    private var coordinatorAcceptsBatches = false

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
                metadata: ["coordinator": "\(configuration.coordinator)", "waited": "\(MessagingContext.defaultTerminationWait)"])
        }
    }

    private func serve() async throws {
        var options = configuration.socketOptions
        options.identity = Array(configuration.workerID.utf8)
        var onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
        if options.curve != nil {
            onHandshakeFailure = { [weak self] failure in
                guard let self else { return }
                Task { await self.handshakeFailed(failure) }
            }
        }
        let channel = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [configuration.coordinator],
            name: "worker", onHandshakeFailure: onHandshakeFailure)
        self.channel = channel
        logger.info("worker connecting", metadata: ["coordinator": "\(configuration.coordinator)",
                                                    "worker": "\(configuration.workerID)",
                                                    "slots": "\(configuration.slots)",
                                                    "compute_threads": "\(configuration.computeThreads)"])
        sayHello()
        heartbeatTask = Task { await self.heartbeat() }
        let usingKeys = options.curve != nil
        let welcomeWatch = Task { [welcomeWarningDelay] in
            try? await Task.sleep(for: welcomeWarningDelay)
            guard !Task.isCancelled else { return }
            self.warnIfUnregistered(usingKeys: usingKeys)
        }
        defer { welcomeWatch.cancel() }
        defer { heartbeatTask?.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await withGracefulShutdownHandler {
                    for await received in channel.messageBatches {
                        defer { flushResults() }
                        for frames in received { try handle(frames) }
                    }
                } onGracefulShutdown: {
                    Task { await self.drain() }
                }
            } onCancel: {
                Task { await self.stop() }
            }
        } catch {
            // Refused for good: leave as `stop()` does (socket, downloads, threads), then say why.
            await stop()
            throw error
        }
        if let refusal { throw refusal }
    }

    /// Says so when no coordinator has answered yet: with keys, a wrong coordinator key looks the same.
    private func warnIfUnregistered(usingKeys: Bool) {
        guard !isRegistered, !isStopping else { return }
        let advice = usingKeys
            ? "With CurveZMQ: does it run with keys, is this worker's public key on its allow-list, and is --coordinator-key its public key?"
            : "If it runs with keys (CurveZMQ), give this worker --secret-key and --coordinator-key."
        logger.warning(
            "no answer from a coordinator yet: is one running at this endpoint? \(advice)",
            metadata: ["coordinator": "\(configuration.coordinator)", "waited": "\(welcomeWarningDelay)"])
    }

    /// The coordinator refused this worker's CurveZMQ handshake: a worker whose key is not listed would
    /// be refused at every reconnect, so it stops and says why.
    private func handshakeFailed(_ failure: HandshakeFailure) async {
        if case .unspecified = failure.reason {
            // Often a connection that broke mid-handshake (the coordinator restarting): libzmq retries.
            logger.warning("handshake with the coordinator failed; retrying", metadata: ["failure": "\(failure)"])
            return
        }
        guard refusal == nil, !isStopping else { return }
        let error = WorkerError.notAuthorized(ClusterSecurityHint.refused(
            endpoint: configuration.coordinator, failure: failure, peer: "worker"))
        refusal = error
        logger.error("the coordinator refused this worker", metadata: ["failure": "\(failure)"])
        await stop()
    }

    /// What the worker's health endpoint reports: registered (welcomed, and no hello awaiting an answer),
    /// draining, stopping, tasks running.
    public var health: WorkerHealth {
        WorkerHealth(registered: isRegistered && helloSentAt == nil, draining: isDraining, stopping: isStopping,
                     running: running.count)
    }

    /// Leaves the cluster now: cancels running tasks, tells the coordinator (which queues them again
    /// elsewhere) and closes the socket.
    public func stop() async {
        guard !isStopping else { return }
        isStopping = true
        tasksAbandoned = running.count
        wakeIdleWaiters()
        heartbeatTask?.cancel()
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

    private func handle(_ frames: [[UInt8]]) throws {
        guard let payload = frames.last else { return }
        let message: Message
        do {
            message = try WireCodec.decode(payload)
        } catch {
            droppedMessages += 1
            if logThrottle.admit("dropped a malformed message from the coordinator", now: .now) {
                logger.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
            }
            return
        }
        for message in MessageBatching.unbatched(message) {
            try handle(message)
        }
    }

    private func handle(_ message: Message) throws {
        switch message {
        case .welcome(let welcome):
            // A (re)welcome means the coordinator holds none of our tasks: whatever still runs is orphaned,
            // and results not sent yet answer the old registration.
            helloSentAt = nil
            let orphaned = Array(running.values) + superseded.values
            running = [:]
            superseded = [:]
            runningShrank()
            pendingResults = []
            lastSequence = 0
            coordinatorAcceptsBatches = welcome.acceptsBatches
            for task in orphaned {
                task.log.info("dropping the task: the coordinator registered this worker again and no longer holds it")
                task.operation.cancel()
            }
            if welcome.heartbeatIntervalMs > 0 { heartbeatInterval = Self.heartbeatInterval(askedMs: welcome.heartbeatIntervalMs) }
            coordinatorMaxMessageBytes = welcome.maxMessageBytes > 0 ? Int64(clamping: welcome.maxMessageBytes) : nil
            inputCache.removeAll()
            isRegistered = true
            logger.info("registered with the coordinator", metadata: [
                "coordinator": "\(welcome.coordinatorID)", "dropped_tasks": "\(orphaned.count)"])
        case .taskAssignment(let assignment):
            lastSequence = max(lastSequence, assignment.sequence)
            if let violation = MessageBounds.violation(in: assignment) { return refuse(assignment, violation) }
            start(assignment)
        case .cancelTask(let cancel):
            // Found by the key the coordinator addresses it by (minor 2), else by its ID (a minor-1 coordinator).
            // A download's key also reaches the tilt-shift chained to it (the cancel crossed the download's result).
            let held = cancel.taskKey != 0
                ? running.values.first { $0.assignment.taskKey == cancel.taskKey } ?? running.values.first { $0.chainedAfter == cancel.taskKey }
                : running[cancel.taskID]
            if let task = held {
                task.log.debug("cancel requested by the coordinator", metadata: ["reason": "\(cancel.reason)"])
                task.operation.cancel()
            } else {
                // Its result has gone already, and serves as the confirmation.
                logger.debug("ignored a cancel for a task this worker no longer runs", metadata: ["task": "\(cancel.taskID)"])
            }
        case .giveBackTask(let request):
            giveBack(request)
        case .refusal(let refusal):
            if refusal.code == .unknownWorker, !isDraining {
                // Refusals arrive in order, one per heartbeat the coordinator did not know: those that come
                // after our hello answer heartbeats sent before it (e.g. a burst queued during a network
                // partition). Registering once is enough; each extra hello would make the coordinator
                // requeue what it had just sent us. A hello unanswered for two heartbeats may have been
                // lost with its connection: send it again.
                if let sent = helloSentAt, ContinuousClock.now - sent < heartbeatInterval * 2 {
                    logger.debug("the coordinator does not know this worker yet: its hello is on the way")
                    return
                }
                logger.info("the coordinator does not know this worker (it restarted?): registering again")
                sayHello()
            } else {
                logger.error("the coordinator refused this worker", metadata: ["reason": "\(refusal.reason)"])
                throw WorkerError.refused(refusal.reason)
            }
        default:
            droppedMessages += 1
            logger.debug("ignored a message meant for clients")
        }
    }

    /// Answers an assignment with a field out of bounds (`MessageBounds`) with a failure that names it: a
    /// worker answers every assignment it receives, however odd (the coordinator would otherwise learn of
    /// it only when it counts the assignment lost).
    private func refuse(_ assignment: TaskAssignment, _ violation: MessageBounds.Violation) {
        if logThrottle.admit("refused an assignment out of bounds", now: .now) {
            logger.warning("refused an assignment with a field out of bounds; its failure is sent", metadata: [
                "field": "\(violation.field)", "reason": "\(PrintableText.escape(violation.reason))"])
        }
        let code: FailureCode = violation.code == .limit ? .limit : .internal
        pendingResults.append(TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt,
            outcome: .failure(TaskFailure(code: code, message: "the assignment was refused: \(violation.reason)")),
            taskKey: assignment.taskKey))
    }

    private func start(_ received: TaskAssignment, chainedAfter: UInt64 = 0, heldBack: TaskResult? = nil) {
        if received.kind == .noop {
            // Nothing to run: answered at once, without an operation (and sent with the other results of
            // this wake-up).
            pendingResults.append(TaskResult(
                taskID: received.taskID, attempt: received.attempt, outcome: .output(TaskOutput(data: [])),
                taskKey: received.taskKey))
            return
        }
        let log = TaskLogger(logger, assignment: received)
        log.debug(chainedAfter == 0 ? "task received" : "chained tilt-shift taken up after its download")
        guard let assignment = inputCache.resolve(received) else {
            let failure = TaskFailure(code: .inputMissing, message:
                "\(received.source): its downloaded image is no longer in this worker's cache; the coordinator downloads it again")
            sendResult(TaskResult(taskID: received.taskID, attempt: received.attempt, outcome: .failure(failure),
                                  taskKey: received.taskKey), after: heldBack)
            log.info("task rejected, result sent", metadata: ["code": "\(failure.code.logName)", "error": "\(failure.message)"])
            return
        }
        var assigned: AssignedTask
        do {
            assigned = try AssignedTask(
                assignment, fetcher: fetcher, filterThreads: configuration.filterThreads, limits: configuration.limits,
                computeThreads: computeThreads, sinkThreads: sinkThreads, log: log)
        } catch {
            sendResult(TaskResult(
                taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(error.failure), taskKey: assignment.taskKey),
                after: heldBack)
            log.info("task rejected, result sent", metadata: [
                "code": "\(error.failure.code.logName)", "error": "\(error.failure.message)"])
            return
        }
        assigned.chainedAfter = chainedAfter
        assigned.heldBack = heldBack
        let task = assigned
        let operation = task.operation
        operation.onCompletion(isolatedTo: self) { worker, _ in
            worker.finished(task)
        }
        if let replaced = running[assignment.taskID] {
            // The same task ID again: the task it replaces is cancelled, and still answered when it ends.
            replaced.log.info("task replaced by another assignment with its task ID: cancelled, its result still sent")
            replaced.operation.cancel()
            superseded[ObjectIdentifier(replaced.operation)] = replaced
        }
        running[assignment.taskID] = task
        do {
            try queue.addOperation(operation)
        } catch {
            running[assignment.taskID] = nil
            runningShrank()
            let message = "\(operation.name) could not be queued: \(error)"
            sendResult(TaskResult(taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(
                TaskFailure(code: .internal, message: message)), taskKey: assignment.taskKey), after: heldBack)
            log.error("task could not be queued, failure sent", metadata: ["error": "\(message)"])
        }
    }

    /// Sends the result of a finished task, unless the task was dropped meanwhile (re-registration).
    private func finished(_ task: AssignedTask) {
        let isCurrent = running[task.assignment.taskID]?.operation === task.operation
        guard isCurrent || superseded.removeValue(forKey: ObjectIdentifier(task.operation)) != nil else {
            task.log.debug("task ended after it was dropped: no result sent")
            return
        }
        if isCurrent { running[task.assignment.taskID] = nil }
        defer { if isCurrent { runningShrank() } }
        var result = task.result
        if task.assignment.kind == .download, case .output(let output) = result.outcome, !ManifestList.isList(output) {
            // Kept for the tilt-shift, which the coordinator sends here (locality); with `keepOutput` the
            // bytes stay here alone.
            result.outcome = inputCache.keep(output, of: task.assignment, capacityOption: "--input-cache-mb")
        }
        var encoded = WireCodec.encode(.taskResult(result))
        let limit = coordinatorMaxMessageBytes ?? configuration.socketOptions.maxMessageSize
        if limit >= 0, Int64(encoded.count) > limit {
            // The coordinator would drop the connection rather than take it: fail the task instead.
            result.outcome = .failure(TaskFailure(code: .limit, message:
                "\(task.assignment.source): the output is \(encoded.count >> 20) MiB, more than the largest message "
                + "the coordinator accepts (\(limit >> 20) MiB, its --max-message-mb): lower --quality, or raise that limit"))
            encoded = WireCodec.encode(.taskResult(result))
        }
        task.logSent(result)
        // A chained tilt-shift starts in the slot the download leaves, when the download's image was kept
        // here (the coordinator counts it as running from that result on); after a failure, or for a
        // manifest, it does not run (nor is answered).
        if isCurrent, let followOn = task.assignment.chainedAssignment, !isStopping, case .output(let output) = result.outcome,
           output.heldOnWorker {
            if configuration.reportsChainedTasksTogether, coordinatorAcceptsBatches {
                return start(followOn, chainedAfter: task.assignment.taskKey, heldBack: result)  // sent with its result
            }
            channel?.send([encoded])
            return start(followOn, chainedAfter: task.assignment.taskKey)
        }
        if let heldBack = task.heldBack {
            let together = WireCodec.encode(.taskResults([heldBack, result]))
            if limit < 0 || Int64(together.count) <= limit {
                channel?.send([together])
                return
            }
            channel?.send([WireCodec.encode(.taskResult(heldBack))])  // each alone within the limit
        }
        channel?.send([encoded])
    }

    /// Sends a task's result, after the chained download's result held back for it (in one message).
    private func sendResult(_ result: TaskResult, after heldBack: TaskResult?) {
        guard let heldBack else { return send(.taskResult(result)) }
        send(.taskResults([heldBack, result]))
    }

    /// Sends the results gathered while handling one wake-up's messages: several in one message when
    /// the coordinator accepts that.
    private func flushResults() {
        guard !pendingResults.isEmpty else { return }
        let results = pendingResults.map(Message.taskResult)
        pendingResults = []
        let messages = coordinatorAcceptsBatches ? MessageBatching.coalesce(results) : results
        channel?.send(contentsOf: messages.map { [WireCodec.encode($0)] })
    }

    /// The heartbeat interval a coordinator asked for, within 100 ms … 60 s: a coordinator (or a peer
    /// posing as one) cannot make this worker flood the network (1 ms would be ~1,000 heartbeats a
    /// second), nor fall silent for so long that it looks dead.
    static func heartbeatInterval(askedMs: UInt32) -> Duration {
        .milliseconds(Int(min(max(askedMs, heartbeatIntervalRangeMs.lowerBound), heartbeatIntervalRangeMs.upperBound)))
    }

    /// The heartbeat intervals a worker accepts, in milliseconds.
    static let heartbeatIntervalRangeMs: ClosedRange<UInt32> = 100...60_000

    private func sayHello() {
        helloSentAt = .now
        send(.workerHello(WorkerHello(
            workerID: configuration.workerID, slots: UInt32(configuration.slots),
            version: ShiftworkVersion.current, hostname: ProcessInfo.processInfo.hostName, acceptsBatches: true,
            acceptsChainedTasks: configuration.acceptsChainedTasks, giveBackThreads: configuration.giveBackThreads)))
    }

    private func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            guard !Task.isCancelled else { return }
            logger.logSuppressed(logThrottle.expired(now: .now), window: logThrottle.window)
            send(.heartbeat(Heartbeat(workerID: configuration.workerID, running: UInt32(running.count),
                                      droppedMessages: droppedMessages, lastSequence: lastSequence,
                                      holding: running.values.flatMap { task in
                                          // A download whose result is held back is still this worker's.
                                          task.heldBack == nil ? [task.assignment.taskKey] : [task.chainedAfter, task.assignment.taskKey]
                                      })))
        }
    }

    func send(_ message: Message) {
        channel?.send([WireCodec.encode(message)])
    }
}
