import CZeroMQ
import Foundation
import Runtime
import Synchronization

/// A ZeroMQ socket that lives on a thread of its own, with an async interface any task may use.
///
/// - Sending (`send(_:)`) never blocks: frames go into an outbox and the socket's thread is woken
///   through an `eventfd` that it polls next to the socket.
/// - Received multipart messages arrive, in order, on `messageBatches`: every message the thread found
///   waiting when it woke up, in one element (one hop for the receiving task, however many arrived).
///   `messages` yields them one by one. The channel holds at most `inboundWatermarks.high` received
///   messages: at that mark its thread stops reading the socket (libzmq's receive high-water mark then
///   holds the peer back) until the consumer has taken them down to `inboundWatermarks.low`.
/// - `close()` flushes what it can within the socket's linger, closes the socket on its own thread and
///   finishes `messages`.
///
/// The socket itself never leaves its thread, as libzmq requires; Swift's cooperative pool never
/// blocks on ZeroMQ.
public final class SocketChannel: Sendable {
    /// Received messages, in order, in groups: each element holds every message received in one go
    /// (at least one). For a ROUTER the first frame of each message is the peer's identity; a channel
    /// opened with `appendsPeerKey` adds a last frame, the sender's public key (see ``open``).
    /// Iterate either this or ``messages``, not both, and keep one iterator: messages of a group that an
    /// abandoned ``messages`` iterator had not handed out yet are not seen by the next one.
    public let messageBatches: SocketInbound
    /// Received messages, one element per multipart message (for a ROUTER the first frame is the peer's
    /// identity): ``messageBatches`` taken apart.
    public var messages: SocketMessages { SocketMessages(batches: messageBatches) }
    /// The endpoint of the first `bind`, with a wildcard port resolved (`tcp://127.0.0.1:*` → `tcp://127.0.0.1:41231`).
    public let boundEndpoint: String?
    private let shared: SocketThreadState

    /// Opens a socket on a new thread, applies `options`, binds and connects it.
    ///
    /// `onUnroutable`, for a ROUTER, is called on the socket's thread with the identity of a peer a
    /// message could not be sent to because it is no longer connected (keep it short).
    ///
    /// `onHandshakeFailure`, when given, is called on the socket's thread for each connection whose
    /// handshake failed (libzmq's socket monitor): with CurveZMQ, the server refused this peer's key.
    ///
    /// `onConnectionEvent`, when given, is called on the socket's thread each time a connection finishes its
    /// handshake or ends (libzmq's socket monitor; ``ConnectionEvent``): with ZMTP heartbeats on
    /// (``SocketOptions/heartbeatIntervalMilliseconds``), a dead peer host ends it too.
    ///
    /// `appendsPeerKey`, for a CurveZMQ server, makes every received message end with one more frame: the
    /// public key (40 characters of Z85) its sender authenticated with, read by the socket's thread from
    /// the message itself (its `User-Id`, which the `ZAPAuthenticator` set at that peer's handshake), so
    /// that each message names its sender's key whatever the peer claims. The frame is empty without
    /// CurveZMQ. ``PeerKeyFrame`` reads it.
    ///
    /// `inboundWatermarks` bound the received messages held for the consumer (``InboundWatermarks``).
    ///
    /// - Throws: `ZeroMQError` when the socket cannot be created, an option is refused, or an endpoint
    ///   cannot be bound (in use, malformed) or connected (malformed).
    public static func open(
        context: MessagingContext,
        kind: SocketKind,
        options: SocketOptions = SocketOptions(),
        bind: [String] = [],
        connect: [String] = [],
        name: String,
        onUnroutable: (@Sendable (_ identity: [UInt8]) -> Void)? = nil,
        onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)? = nil,
        onConnectionEvent: (@Sendable (ConnectionEvent) -> Void)? = nil,
        appendsPeerKey: Bool = false,
        inboundWatermarks: InboundWatermarks = .standard
    ) async throws -> SocketChannel {
        let shared = try SocketThreadState(
            inboundWatermarks: inboundWatermarks, onUnroutable: onUnroutable, onHandshakeFailure: onHandshakeFailure,
            onConnectionEvent: onConnectionEvent)
        let endpoint: String? = try await withCheckedThrowingContinuation { opened in
            let thread = Thread {
                // From inside: Foundation on Linux does not apply a name set before `start()`.
                shiftwork_name_current_thread(String("zmq-\(name)".prefix(15)))
                runSocketThread(
                    context: context, kind: kind, options: options,
                    bind: bind, connect: connect, appendsPeerKey: appendsPeerKey, shared: shared, opened: opened)
            }
            thread.start()
        }
        return SocketChannel(boundEndpoint: endpoint, shared: shared)
    }

    private init(boundEndpoint: String?, shared: SocketThreadState) {
        self.messageBatches = SocketInbound(buffer: shared.inbound)
        self.boundEndpoint = boundEndpoint
        self.shared = shared
    }

    deinit {
        shared.requestClose()
    }

    /// Queues a multipart message for sending. Never blocks; after `close()` the message is dropped
    /// and counted in `droppedMessages`.
    public func send(_ frames: [[UInt8]]) {
        shared.enqueue(CollectionOfOne(frames))
    }

    /// Queues several multipart messages for sending, in order, with at most one wake-up of the socket's
    /// thread. Never blocks.
    public func send(contentsOf messages: [[[UInt8]]]) {
        guard !messages.isEmpty else { return }
        shared.enqueue(messages)
    }

    /// Messages waiting for the socket's thread to hand them to libzmq: a sender that produces many
    /// (replaying stored results, say) waits while this is high, so that memory stays bounded.
    public var queuedOutboundMessages: Int {
        shared.outbox.withLock { $0.pending.count }
    }

    /// Messages dropped on the sending side: unroutable (a ROUTER peer that is gone) or sent after close.
    public var droppedMessages: Int {
        shared.dropped.load(ordering: .relaxed)
    }

    /// Elements put on ``messageBatches`` so far. A consumer that counts the elements it has handled can
    /// tell from this whether it is behind (messages received and not handled yet), and wait until it has
    /// caught up with a given count: the coordinator judges its workers' silence that way.
    public var receivedBatchCount: UInt64 {
        shared.receivedBatches.load(ordering: .acquiring)
    }

    /// Received messages held for the consumer now (at most `inboundWatermarks.high`).
    public var bufferedInboundMessages: Int {
        shared.inbound.bufferedMessages
    }

    /// The most received messages held for the consumer at once so far: never above
    /// `inboundWatermarks.high`; at it, the consumer lagged and the socket's thread paused reading.
    public var peakBufferedInboundMessages: Int {
        shared.inbound.peakBufferedMessages
    }

    /// Flushes what the linger allows, closes the socket and waits for its thread to end. Idempotent.
    public func close() async {
        await shared.close()
    }
}

/// What a socket's thread shares with the tasks that use it. All mutable state is behind `outbox`'s
/// mutex or atomic; the socket is not here: it lives only on its thread.
final class SocketThreadState: Sendable {
    struct Outbox {
        var pending: [[[UInt8]]] = []
        var closing = false
        var finished = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let outbox = InlineLock(Outbox())
    let dropped = Atomic<Int>(0)
    /// Groups appended to `inbound` (counted before each append, so never behind what a consumer saw).
    let receivedBatches = Atomic<UInt64>(0)
    /// Received messages held for the consumer, bounded by its watermarks.
    let inbound: InboundBuffer
    let wakeEvent: WakeEvent
    let onUnroutable: (@Sendable ([UInt8]) -> Void)?
    let onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
    let onConnectionEvent: (@Sendable (ConnectionEvent) -> Void)?

    init(
        inboundWatermarks: InboundWatermarks = .standard, onUnroutable: (@Sendable ([UInt8]) -> Void)? = nil,
        onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)? = nil,
        onConnectionEvent: (@Sendable (ConnectionEvent) -> Void)? = nil
    ) throws {
        self.onUnroutable = onUnroutable
        self.onHandshakeFailure = onHandshakeFailure
        self.onConnectionEvent = onConnectionEvent
        let wakeEvent = try WakeEvent()
        self.wakeEvent = wakeEvent
        // Below the low watermark the consumer wakes the thread, which polls the socket for input again.
        self.inbound = InboundBuffer(watermarks: inboundWatermarks, wakeProducer: { wakeEvent.signal() })
    }

    func enqueue<Messages: Collection<[[UInt8]]>>(_ messages: Messages) {
        let shouldWake: Bool? = outbox.withLock { box in
            if box.closing { return nil }
            let wasEmpty = box.pending.isEmpty
            box.pending.append(contentsOf: messages)
            return wasEmpty
        }
        switch shouldWake {
        case nil: dropped.add(messages.count, ordering: .relaxed)
        case true?: wake()
        case false?: break  // the thread has been woken for an earlier message and will take this one too
        }
    }

    func wake() {
        wakeEvent.signal()
    }

    func requestClose() {
        let first = outbox.withLock { box in
            defer { box.closing = true }
            return !box.closing
        }
        if first { wake() }
    }

    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyFinished = outbox.withLock { box in
                box.closing = true
                if box.finished { return true }
                box.closeWaiters.append(continuation)
                return false
            }
            if alreadyFinished { continuation.resume() } else { wake() }
        }
    }

    /// Called by the thread as its last act.
    func markFinished() {
        let waiters = outbox.withLock { box in
            box.finished = true
            box.closing = true
            defer { box.closeWaiters = [] }
            return box.closeWaiters
        }
        inbound.finish()
        for waiter in waiters { waiter.resume() }
    }
}

/// The body of a socket's thread: create, bind, connect, then poll until closed.
private func runSocketThread(
    context: MessagingContext,
    kind: SocketKind,
    options: SocketOptions,
    bind: [String],
    connect: [String],
    appendsPeerKey: Bool,
    shared: SocketThreadState,
    opened: CheckedContinuation<String?, any Error>
) {
    let socket: Socket
    let monitor: SocketMonitor?
    let endpoint: String?
    do {
        (socket, monitor, endpoint) = try Socket.opened(
            context: context, kind: kind, options: options, bind: bind, connect: connect,
            monitored: shared.onHandshakeFailure != nil, watchesConnections: shared.onConnectionEvent != nil)
    } catch {
        shared.markFinished()
        opened.resume(throwing: error)
        return
    }
    opened.resume(returning: endpoint)
    var loop = SocketLoop(socket: socket, monitor: monitor, shared: shared, appendsPeerKey: appendsPeerKey)
    loop.run()
    monitor?.close()
    socket.close()
    shared.markFinished()
}

/// The poll loop of one socket's thread.
private struct SocketLoop {
    let socket: Socket
    let monitor: SocketMonitor?
    let shared: SocketThreadState
    /// Each received message gets its sender's public key as a last frame (`SocketChannel.open`).
    let appendsPeerKey: Bool
    /// Messages taken from the outbox that the socket has not accepted yet (high-water mark reached).
    var backlog = SendBacklog()
    /// At most this many messages are received per wake-up before sends get their turn.
    let receiveBurst = 4_096

    init(socket: Socket, monitor: SocketMonitor?, shared: SocketThreadState, appendsPeerKey: Bool) {
        self.socket = socket
        self.monitor = monitor
        self.shared = shared
        self.appendsPeerKey = appendsPeerKey
    }

    mutating func run() {
        var items = [zmq_pollitem_t](repeating: zmq_pollitem_t(), count: monitor == nil ? 2 : 3)
        items[0].socket = socket.handle
        items[1].fd = shared.wakeEvent.descriptor
        items[1].events = Int16(ZMQ_POLLIN)
        if let monitor {
            items[2].socket = monitor.handle
            items[2].events = Int16(ZMQ_POLLIN)
        }
        while true {
            let blocked = !backlog.isEmpty
            // With the consumer's buffer full, input stays in libzmq until the consumer wakes this thread.
            let reading = shared.inbound.capacity() > 0
            items[0].events = (reading ? Int16(ZMQ_POLLIN) : 0) | (blocked ? Int16(ZMQ_POLLOUT) : 0)
            for index in items.indices { items[index].revents = 0 }
            if zmq_poll(&items, Int32(items.count), -1) < 0 {
                if zmq_errno() == EINTR { continue }
                return  // ETERM: the context is shutting down
            }
            if items[1].revents != 0 { shared.wakeEvent.clear() }
            if let monitor, items[2].revents != 0 {
                for event in monitor.events() {
                    switch event {
                    case .handshakeFailed(let failure): shared.onHandshakeFailure?(failure)
                    case .connection(let change): shared.onConnectionEvent?(change)
                    }
                }
            }
            do {
                try receiveAvailable()
                let closing = try sendAvailable()
                if closing { return }
            } catch {
                return
            }
        }
    }

    /// Hands every message waiting on the socket (up to `receiveBurst`, and as many as the consumer's
    /// buffer takes) to the consumer in one group.
    private func receiveAvailable() throws {
        let limit = min(receiveBurst, shared.inbound.capacity())
        var received: [[[UInt8]]] = []
        defer {
            if !received.isEmpty {
                shared.receivedBatches.add(1, ordering: .releasing)
                shared.inbound.append(received)
            }
        }
        while received.count < limit, let frames = try socket.receive(appendingPeerKey: appendsPeerKey) {
            received.append(frames)
        }
    }

    /// Sends what the socket accepts; returns true when the channel is closing.
    private mutating func sendAvailable() throws -> Bool {
        let (taken, closing) = shared.outbox.withLock { box -> ([[[UInt8]]], Bool) in
            defer { box.pending = [] }
            return (box.pending, box.closing)
        }
        let outcome = try backlog.send(taken, on: socket)
        for identity in outcome.unroutable {
            shared.dropped.add(1, ordering: .relaxed)
            shared.onUnroutable?(identity)
        }
        if outcome.blocked && closing {
            // The linger bounds how long what was queued may still take; the rest is dropped.
            shared.dropped.add(backlog.dropAll(), ordering: .relaxed)
        }
        return closing
    }
}
