import CZeroMQ
import Foundation

/// A serial executor whose thread also owns one ZeroMQ socket: an actor that uses it runs its jobs, reads
/// its messages and sends on one thread, which sleeps in one `zmq_poll` on the socket, the `eventfd` that
/// wakes it for new jobs, and the next timer deadline.
///
/// Compared with an actor on a thread of its own talking to a ``SocketChannel`` (a second
/// thread), a message in or out crosses one thread less: received messages are handed to the actor
/// synchronously, every message waiting in one group (`onMessages`), and a send made on the thread goes
/// to `zmq_send` at once, with no outbox and no wake-up of another thread.
///
/// ```swift
/// actor Server {
///     private nonisolated let executor = try! PolledSocketExecutor(name: "server")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
///
///     func start(context: MessagingContext) throws {
///         try executor.openSocket(context: context, kind: .router, bind: ["tcp://127.0.0.1:*"],
///             onMessages: { [weak self] messages in self?.assumeIsolated { $0.handle(messages) } })
///     }
///     func handle(_ messages: [[[UInt8]]]) { executor.send(contentsOf: messages) }  // echo
/// }
/// ```
///
/// The socket never leaves the thread, as libzmq requires: every method that touches it checks that it
/// is called on the thread (from the actor), and the handlers are called only there, between jobs, so
/// they may `assumeIsolated` into the actor. `send` and ``close()`` also work from other threads, by
/// posting to the thread. Jobs run in the order they were enqueued; messages are sent in order per
/// sending thread.
///
/// The thread ends when the executor is released (an actor holds it as long as the actor lives; a job
/// in flight holds the actor), closing the socket if it is still open.
public final class PolledSocketExecutor: SerialExecutor, Sendable {
    /// The thread's name (Linux keeps 15 characters).
    public let name: String
    private let posts: PolledSocketPosts
    /// Touched only on its thread: `onThread` checks.
    private nonisolated(unsafe) let loop: PolledSocketLoop

    /// Starts the thread, with no socket yet (``openSocket(context:kind:options:bind:connect:appendsPeerKey:onMessages:onUnroutable:onHandshakeFailure:)``).
    ///
    /// - Throws: `ZeroMQError` when the process cannot create an `eventfd` (out of file descriptors).
    public init(name: String) throws {
        self.name = name
        let posts = try PolledSocketPosts()
        let loop = PolledSocketLoop(posts: posts)
        self.posts = posts
        self.loop = loop
        // Handed to the thread, which is the only one to use it from here on.
        nonisolated(unsafe) let threadsLoop = loop
        let thread = Thread {
            // Named from inside, by the kernel's own call: Foundation on Linux does not apply a name set
            // before `start()`, and one set inside through `Thread.name` may be lost to a race with it.
            shiftwork_name_current_thread(String(name.prefix(15)))
            threadsLoop.run()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    deinit {
        posts.stop()
    }

    /// Queues `job` to run on the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        posts.enqueue(UnownedJob(job), on: asUnownedSerialExecutor())
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Stops the process unless called on the executor's thread (`assumeIsolated` asks it).
    public func checkIsolated() {
        precondition(posts.isCurrentThread, "not on the thread of executor '\(name)'")
    }

    /// Whether the caller runs on the executor's thread (`assumeIsolated` asks it).
    public func isIsolatingCurrentContext() -> Bool? {
        posts.isCurrentThread
    }

    /// Whether the caller runs on the executor's thread.
    public var isCurrentThread: Bool { posts.isCurrentThread }

    /// The loop, for a caller on the thread.
    private func onThread<Result>(_ what: String, _ body: (PolledSocketLoop) throws -> Result) rethrows -> Result {
        precondition(
            posts.isCurrentThread, "\(what) must be called on the thread of executor '\(name)' (from its actor)")
        return try body(loop)
    }

    // MARK: The socket

    /// Opens the executor's socket on its thread (call it from the actor): applies `options`, binds and
    /// connects. Returns the endpoint of the first `bind`, with a wildcard port resolved.
    ///
    /// The handlers are called on the thread, between jobs (``assumeIsolated`` works there):
    /// - `onMessages` with every message waiting on the socket (at most 4,096), in order, at least one.
    ///   For a ROUTER the first frame of each message is the peer's identity; with `appendsPeerKey`, its
    ///   last frame is the sender's CurveZMQ public key (as for ``SocketChannel/open``; ``PeerKeyFrame``).
    /// - `onUnroutable`, for a ROUTER, with the identity of a peer a message could not be sent to (gone),
    ///   after the send, never from within it.
    /// - `onHandshakeFailure`, when given, for each connection whose handshake failed (socket monitor).
    ///
    /// - Throws: `ZeroMQError` when the socket cannot be created, an option is refused, or an endpoint
    ///   cannot be bound (in use, malformed) or connected (malformed).
    @discardableResult
    public func openSocket(
        context: MessagingContext,
        kind: SocketKind,
        options: SocketOptions = SocketOptions(),
        bind: [String] = [],
        connect: [String] = [],
        appendsPeerKey: Bool = false,
        onMessages: @escaping @Sendable (_ messages: [[[UInt8]]]) -> Void,
        onUnroutable: (@Sendable (_ identity: [UInt8]) -> Void)? = nil,
        onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)? = nil
    ) throws -> String? {
        try onThread("openSocket") { loop in
            try loop.openSocket(
                context: context, kind: kind, options: options, bind: bind, connect: connect,
                appendsPeerKey: appendsPeerKey, onMessages: onMessages, onUnroutable: onUnroutable,
                onHandshakeFailure: onHandshakeFailure)
        }
    }

    /// Sends a multipart message. Never blocks. On the thread it goes to libzmq at once (or waits in
    /// order while a peer's queue is full); from another thread it is posted to the thread. Without an
    /// open socket the message is dropped and counted in ``droppedMessages``.
    public func send(_ frames: [[UInt8]]) {
        send(contentsOf: CollectionOfOne(frames))
    }

    /// Sends several multipart messages, in order (see ``send(_:)``); from another thread, with at
    /// most one wake-up of the executor's thread.
    public func send<Messages: Collection<[[UInt8]]>>(contentsOf messages: Messages) {
        guard !messages.isEmpty else { return }
        if posts.isCurrentThread {
            loop.send(messages)
        } else {
            posts.enqueue(messages)
        }
    }

    /// Messages sent and not yet accepted by libzmq (a peer's queue is full, or posted from another
    /// thread and not taken yet): a sender that produces many waits while this is high.
    public var queuedOutboundMessages: Int {
        posts.backlogCount.load(ordering: .relaxed) + posts.outboxCount
    }

    /// Messages dropped on the sending side: unroutable (a ROUTER peer that is gone), sent without an
    /// open socket, or left unsent when it closed.
    public var droppedMessages: Int {
        posts.dropped.load(ordering: .relaxed)
    }

    /// Whether messages wait on the socket that the thread has not read yet (call it on the thread): a
    /// burst larger than one group, or messages that came while a job ran.
    public var hasUnreadMessages: Bool {
        onThread("hasUnreadMessages") { $0.hasUnreadMessages }
    }

    /// Whether the socket is open (call it on the thread).
    public var isSocketOpen: Bool {
        onThread("isSocketOpen") { $0.isSocketOpen }
    }

    /// Sends what the socket accepts now, drops the rest (libzmq may still take the socket's linger to
    /// deliver what it accepted), closes the socket and its monitor, at once. Call it on the thread; from
    /// elsewhere, ``close()``. Idempotent; the thread keeps running jobs.
    public func closeSocket() {
        onThread("closeSocket") { $0.closeSocket() }
    }

    /// ``closeSocket()`` from any thread: posts it to the thread and waits until it is done.
    public func close() async {
        await posts.requestClose()
    }

    // MARK: The timer

    /// Calls `tick` on the thread every `interval` (between jobs; `assumeIsolated` works there), the
    /// first time one `interval` from now; replaces any earlier timer. Call it on the thread.
    public func startTimer(every interval: Duration, _ tick: @escaping @Sendable () -> Void) {
        onThread("startTimer") { $0.startTimer(every: interval, tick) }
    }

    /// Stops the timer (call it on the thread).
    public func stopTimer() {
        onThread("stopTimer") { $0.stopTimer() }
    }

    /// Calls `call` on the thread once, `delay` from now or soon after (between jobs; `assumeIsolated` works
    /// there): a one-shot timer that belongs to the thread, as NIO's `scheduleTask` belongs to its event loop,
    /// instead of a task that sleeps. Call it on the thread.
    public func schedule(after delay: Duration, _ call: @escaping @Sendable () -> Void) {
        onThread("schedule") { $0.schedule(at: .now + delay, call) }
    }

    /// Drops every call `schedule(after:_:)` set that has not run yet (call it on the thread).
    public func cancelScheduledCalls() {
        onThread("cancelScheduledCalls") { $0.cancelScheduledCalls() }
    }
}
