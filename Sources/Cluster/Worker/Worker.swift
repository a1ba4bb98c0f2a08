import Foundation
import Imaging
import Logging
import Messaging
import Operations
import Wire

/// Settings of a worker.
public struct WorkerConfiguration: Sendable {
    /// The coordinator's endpoint, e.g. `tcp://coordinator:5570` or `inproc://shiftwork`.
    public var coordinator: String
    /// Tasks run at once; the coordinator never sends more.
    public var slots: Int
    /// The worker's name in status and logs; also its ZeroMQ identity. Unique per worker.
    public var workerID: String
    /// Download limits and whether local paths and `file://` URLs may be read.
    public var fetch: FetchConfiguration
    /// Threads the filter may use for one image.
    public var filterThreads: Int
    /// Pixel and byte limits for the images this worker decodes.
    public var limits: ImageLimits
    /// Socket options (frame size limit, linger, queue bounds).
    public var socketOptions: SocketOptions

    /// Creates a configuration for a worker of `coordinator`.
    public init(
        coordinator: String,
        slots: Int = ProcessInfo.processInfo.activeProcessorCount,
        workerID: String = WorkerConfiguration.defaultWorkerID(),
        fetch: FetchConfiguration = FetchConfiguration(),
        filterThreads: Int = 1,
        limits: ImageLimits = .default,
        socketOptions: SocketOptions = SocketOptions()
    ) {
        self.coordinator = coordinator
        self.slots = max(1, slots)
        self.workerID = workerID
        self.fetch = fetch
        self.filterThreads = max(1, filterThreads)
        self.limits = limits
        self.socketOptions = socketOptions
    }

    /// `HOSTNAME-PID-RANDOM`: unique across restarts and across containers of one host.
    public static func defaultWorkerID() -> String {
        let random = UUID().uuidString.lowercased().prefix(6)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(random)"
    }
}

/// A worker: connects to the coordinator, says hello with its slots, heartbeats, runs the download and
/// tilt-shift tasks it is sent and answers each with its result.
///
/// A worker the coordinator does not know (after a coordinator restart, or after it was declared dead)
/// is told so on its next heartbeat and registers again by itself.
public actor Worker {
    private let configuration: WorkerConfiguration
    private let context: MessagingContext
    private let logger: Logger
    private let fetcher: ImageFetcher
    /// Runs the assigned tasks, at most `slots` at once (the coordinator never sends more).
    private let queue: WorkQueue
    private var channel: SocketChannel?
    private var running: [String: AssignedTask] = [:]
    private var heartbeatInterval = ClusterDefaults.heartbeatInterval
    private var heartbeatTask: Task<Void, Never>?
    private var isStopping = false
    private var isDraining = false
    /// Results produced while handling the messages of one wake-up, sent together at its end.
    private var pendingResults: [TaskResult] = []
    /// Whether the coordinator takes several results in one message (its `Welcome` said so).
    private var coordinatorAcceptsBatches = false

    /// Creates a worker that will connect within `context` (share the coordinator's for `inproc://`).
    public init(configuration: WorkerConfiguration, context: MessagingContext, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.fetcher = ImageFetcher(configuration: configuration.fetch)
        self.queue = WorkQueue(name: "worker tasks", maxConcurrentOperationCount: configuration.slots)
    }

    /// Connects, registers and serves tasks until `stop()` is called or the surrounding task is cancelled.
    ///
    /// - Throws: `ZeroMQError` when the endpoint is malformed; `WorkerError` when the coordinator
    ///   refuses this worker for good (another protocol version).
    public func run() async throws {
        var options = configuration.socketOptions
        options.identity = Array(configuration.workerID.utf8)
        let channel = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [configuration.coordinator],
            name: "worker")
        self.channel = channel
        logger.info("worker connecting", metadata: ["coordinator": "\(configuration.coordinator)",
                                                    "worker": "\(configuration.workerID)",
                                                    "slots": "\(configuration.slots)"])
        sayHello()
        heartbeatTask = Task { await self.heartbeat() }
        defer { heartbeatTask?.cancel() }
        try await withTaskCancellationHandler {
            for await received in channel.messageBatches {
                defer { flushResults() }
                for frames in received { try handle(frames) }
            }
        } onCancel: {
            Task { await self.stop() }
        }
    }

    /// Stops gracefully: takes no new tasks, finishes those it runs (for at most `timeout`), then
    /// leaves. Tasks still running at the deadline are cancelled and the coordinator queues them again.
    /// Returns how many tasks finished while draining.
    @discardableResult
    public func drain(timeout: Duration) async -> Int {
        guard !isStopping, !isDraining else { return 0 }
        isDraining = true
        let holding = running.count
        logger.info("draining: finishing running tasks, taking no new ones", metadata: ["running": "\(holding)"])
        send(.workerGoodbye(WorkerGoodbye(workerID: configuration.workerID, draining: true)))
        let deadline = ContinuousClock.now + timeout
        while !running.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let unfinished = running.count
        logger.info("drained", metadata: ["finished": "\(holding - unfinished)", "abandoned": "\(unfinished)"])
        await stop()
        return holding - unfinished
    }

    /// Leaves the cluster now: cancels running tasks, tells the coordinator (which queues them again
    /// elsewhere) and closes the socket.
    public func stop() async {
        guard !isStopping else { return }
        isStopping = true
        heartbeatTask?.cancel()
        for task in running.values { task.operation.cancel() }
        send(.workerGoodbye(WorkerGoodbye(workerID: configuration.workerID)))
        await channel?.close()
        try? await fetcher.shutdown()
    }

    private func handle(_ frames: [[UInt8]]) throws {
        guard let payload = frames.last else { return }
        let message: Message
        do {
            message = try WireCodec.decode(payload)
        } catch {
            logger.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
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
            for task in running.values { task.operation.cancel() }
            running = [:]
            pendingResults = []
            coordinatorAcceptsBatches = welcome.acceptsBatches
            if welcome.heartbeatIntervalMs > 0 { heartbeatInterval = .milliseconds(Int(welcome.heartbeatIntervalMs)) }
            logger.info("registered with the coordinator", metadata: ["coordinator": "\(welcome.coordinatorID)"])
        case .taskAssignment(let assignment):
            start(assignment)
        case .cancelTask(let cancel):
            running[cancel.taskID]?.operation.cancel()
        case .refusal(let refusal):
            if refusal.reason == Dispatcher.unknownWorkerReason, !isDraining {
                logger.info("the coordinator does not know this worker (it restarted?): registering again")
                sayHello()
            } else {
                logger.error("the coordinator refused this worker", metadata: ["reason": "\(refusal.reason)"])
                throw WorkerError.refused(refusal.reason)
            }
        default:
            logger.debug("ignored a message meant for clients")
        }
    }

    private func start(_ assignment: TaskAssignment) {
        if assignment.kind == .noop {
            // Nothing to run: answered at once, without an operation (and sent with the other results of
            // this wake-up).
            pendingResults.append(TaskResult(
                taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(TaskOutput(data: [])),
                taskKey: assignment.taskKey))
            return
        }
        let task: AssignedTask
        do {
            task = try AssignedTask(
                assignment, fetcher: fetcher, filterThreads: configuration.filterThreads, limits: configuration.limits)
        } catch {
            send(.taskResult(TaskResult(
                taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(error.failure), taskKey: assignment.taskKey)))
            return
        }
        let operation = task.operation
        operation.onCompletion(isolatedTo: self) { worker, _ in
            worker.finished(task)
        }
        running[assignment.taskID] = task
        do {
            try queue.addOperation(operation)
            logger.debug("task started", metadata: ["task": "\(assignment.taskID)", "attempt": "\(assignment.attempt)"])
        } catch {
            running[assignment.taskID] = nil
            send(.taskResult(TaskResult(taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(
                TaskFailure(code: .internal, message: "\(operation.name) could not be queued: \(error)")),
                taskKey: assignment.taskKey)))
        }
    }

    /// Sends the result of a finished task, unless the task was dropped meanwhile (re-registration).
    private func finished(_ task: AssignedTask) {
        guard let current = running[task.assignment.taskID], current.operation === task.operation else { return }
        running[task.assignment.taskID] = nil
        send(.taskResult(task.result))
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

    private func sayHello() {
        send(.workerHello(WorkerHello(
            workerID: configuration.workerID, slots: UInt32(configuration.slots),
            version: ShiftworkVersion.current, hostname: ProcessInfo.processInfo.hostName, acceptsBatches: true)))
    }

    private func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            guard !Task.isCancelled else { return }
            send(.heartbeat(Heartbeat(workerID: configuration.workerID, running: UInt32(running.count))))
        }
    }

    private func send(_ message: Message) {
        channel?.send([WireCodec.encode(message)])
    }
}

/// Why a worker stopped on its own.
public enum WorkerError: Error, CustomStringConvertible {
    /// The coordinator refused this worker and retrying will not help.
    case refused(String)

    public var description: String {
        switch self {
        case .refused(let reason): "the coordinator refused this worker: \(reason)"
        }
    }
}
