import Foundation
import Logging
import Messaging
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

    /// Creates a configuration listening on `listen`.
    public init(
        listen: [String] = [ClusterDefaults.listenEndpoint],
        heartbeatInterval: Duration = ClusterDefaults.heartbeatInterval,
        workerTimeout: Duration = ClusterDefaults.workerTimeout,
        socketOptions: SocketOptions = SocketOptions()
    ) {
        self.listen = listen
        self.heartbeatInterval = heartbeatInterval
        self.workerTimeout = workerTimeout
        self.socketOptions = socketOptions
    }
}

/// The coordinator: accepts batches from clients, splits them into download and tilt-shift tasks, sends
/// those to workers as they have free slots, injects each download's bytes into its tilt-shift task, and
/// streams every item's result back to its client.
///
/// One ROUTER socket serves clients and workers alike; the message type tells them apart. The socket
/// lives on its own thread (`SocketChannel`); the scheduling rules live in `CoordinatorState`, which
/// this actor drives one message at a time.
public actor Coordinator {
    private let configuration: CoordinatorConfiguration
    private let context: MessagingContext
    private let logger: Logger
    private var state: CoordinatorState
    private var channel: SocketChannel?
    private var tasks: [Task<Void, Never>] = []

    /// Creates a coordinator that will bind within `context` (share it with workers for `inproc://`).
    public init(configuration: CoordinatorConfiguration, context: MessagingContext, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        self.state = CoordinatorState(
            coordinatorID: "coordinator-" + UUID().uuidString.lowercased().prefix(8),
            heartbeatInterval: configuration.heartbeatInterval,
            workerTimeout: configuration.workerTimeout)
    }

    /// Binds the listening endpoints and starts serving. Returns the first bound endpoint with any
    /// wildcard port resolved.
    ///
    /// - Throws: `ZeroMQError` when an endpoint cannot be bound (in use, malformed, not a local address).
    @discardableResult
    public func start() async throws -> String? {
        let channel = try await SocketChannel.open(
            context: context, kind: .router, options: configuration.socketOptions,
            bind: configuration.listen, name: "coordinator")
        self.channel = channel
        logger.info("coordinator listening", metadata: ["endpoints": "\(configuration.listen)",
                                                         "bound": "\(channel.boundEndpoint ?? "-")"])
        tasks.append(Task { await self.receive(from: channel) })
        tasks.append(Task { await self.watchWorkers() })
        return channel.boundEndpoint
    }

    /// Stops serving and closes the socket. Work in flight is abandoned.
    public func stop() async {
        for task in tasks { task.cancel() }
        tasks = []
        await channel?.close()
        channel = nil
    }

    private func receive(from channel: SocketChannel) async {
        for await frames in channel.messages {
            handle(frames)
        }
    }

    private func handle(_ frames: [[UInt8]]) {
        guard frames.count == 2 else {
            state.droppedMessages += 1
            logger.debug("dropped a message with \(frames.count) frames (expected identity + envelope)")
            return
        }
        let peer = PeerIdentity(frames[0])
        let message: Message
        do {
            message = try WireCodec.decode(frames[1])
        } catch {
            state.droppedMessages += 1
            logger.warning("dropped a malformed message", metadata: ["peer": "\(peer)", "error": "\(error)"])
            if case .unsupportedMajorVersion = error {
                send([Outbound(peer: peer, message: .refusal(Refusal(reason: error.description)))])
            }
            return
        }
        log(message, from: peer)
        send(state.handle(message, from: peer, now: .now))
    }

    private func watchWorkers() async {
        let interval = configuration.heartbeatInterval
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let before = Set(state.workers.keys)
            send(state.expireWorkers(now: .now))
            for peer in before.subtracting(state.workers.keys) {
                logger.warning("worker declared dead; its tasks are queued again",
                               metadata: ["worker": "\(peer)", "silence": "> \(configuration.workerTimeout)"])
            }
        }
    }

    private func send(_ outbound: [Outbound]) {
        guard let channel else { return }
        for item in outbound {
            channel.send([item.peer.bytes, WireCodec.encode(item.message)])
        }
    }

    private func log(_ message: Message, from peer: PeerIdentity) {
        switch message {
        case .workerHello(let hello):
            logger.info("worker joined", metadata: ["worker": "\(hello.workerID)", "slots": "\(hello.slots)",
                                                   "host": "\(hello.hostname)"])
        case .workerGoodbye(let goodbye):
            logger.info("worker left", metadata: ["worker": "\(goodbye.workerID)"])
        case .submitBatch(let submit):
            logger.info("batch submitted", metadata: ["client": "\(peer)", "items": "\(submit.items.count)"])
        case .taskResult(let result):
            if case .failure(let failure) = result.outcome {
                logger.info("task failed", metadata: ["task": "\(result.taskID)", "error": "\(failure.message)"])
            } else {
                logger.debug("task done", metadata: ["task": "\(result.taskID)"])
            }
        default:
            logger.trace("message", metadata: ["peer": "\(peer)"])
        }
    }
}
