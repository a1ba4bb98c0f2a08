import CZeroMQ
import Foundation

/// The thread of a ``PolledSocketExecutor`` and everything only it touches: the socket, its monitor, the
/// messages the socket has not accepted yet, the timer. One loop: take what other threads posted, run
/// the jobs, receive what the socket holds and hand it over in one group, send, fire the timer when due,
/// then sleep in `zmq_poll` on the socket, the `eventfd` of posts and the monitor, until the next deadline.
///
/// Not `Sendable`: only the executor's thread calls it (``PolledSocketExecutor`` checks).
final class PolledSocketLoop {
    /// The socket and its handlers, while open.
    private struct OpenSocket {
        let socket: Socket
        let monitor: SocketMonitor?
        /// Kept alive while its socket is open (terminating a context waits for its sockets).
        let context: MessagingContext
        let appendsPeerKey: Bool
        let onMessages: @Sendable ([[[UInt8]]]) -> Void
        let onUnroutable: (@Sendable ([UInt8]) -> Void)?
        let onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
    }

    /// A repeating tick.
    private struct Timer {
        let interval: Duration
        var next: ContinuousClock.Instant
        let tick: @Sendable () -> Void
    }

    /// At most this many messages are received per turn before jobs and sends get theirs.
    static let receiveBurst = 4_096

    let posts: PolledSocketPosts
    private var open: OpenSocket?
    private var backlog = SendBacklog()
    /// Identities of peers a message could not be routed to, reported at the end of the turn (not from
    /// within a send: the handler may well send).
    private var unroutable: [[UInt8]] = []
    private var timer: Timer?
    /// One-shot calls (`schedule(at:_:)`), due in order.
    private var scheduledCalls = ScheduledCalls()
    /// What the last `zmq_poll` found.
    private var socketReadable = false
    private var monitorReadable = false

    init(posts: PolledSocketPosts) {
        self.posts = posts
    }

    // MARK: The thread

    /// The thread's body; returns once the executor is released and no job is left.
    func run() {
        posts.markCurrentThread()
        var items: [zmq_pollitem_t] = []
        while true {
            let taken = posts.take()
            for (job, executor) in taken.jobs { job.runSynchronously(on: executor) }
            if !taken.outbox.isEmpty { send(taken.outbox) }
            if taken.closeRequested { closeSocket() }
            if socketReadable { receiveAvailable() }
            if monitorReadable { reportHandshakeFailures() }
            if !backlog.isEmpty { flushBacklog() }
            reportUnroutable()
            fireTimerIfDue()
            runDueCalls()
            if taken.stopped && taken.jobs.isEmpty { break }
            let timeout = posts.prepareToSleep() ? pollTimeout() : 0
            poll(&items, timeoutMilliseconds: timeout)
        }
        closeSocket()
    }

    /// Polls the socket (readable; writable while messages wait), the posts' `eventfd` and the monitor.
    private func poll(_ items: inout [zmq_pollitem_t], timeoutMilliseconds: Int) {
        items.removeAll(keepingCapacity: true)
        var wake = zmq_pollitem_t()
        wake.fd = posts.wakeEvent.descriptor
        wake.events = Int16(ZMQ_POLLIN)
        items.append(wake)
        if let open {
            var socket = zmq_pollitem_t()
            socket.socket = open.socket.handle
            socket.events = Int16(ZMQ_POLLIN) | (backlog.isEmpty ? 0 : Int16(ZMQ_POLLOUT))
            items.append(socket)
            if let monitor = open.monitor {
                var watch = zmq_pollitem_t()
                watch.socket = monitor.handle
                watch.events = Int16(ZMQ_POLLIN)
                items.append(watch)
            }
        }
        socketReadable = false
        monitorReadable = false
        if zmq_poll(&items, Int32(items.count), timeoutMilliseconds) < 0 {
            // EINTR: the next turn polls again. ETERM: the context is ending; its socket must close.
            if zmq_errno() == ETERM { closeSocket() }
            return
        }
        if items[0].revents != 0 { posts.wakeEvent.clear() }
        if items.count > 1 { socketReadable = items[1].revents & Int16(ZMQ_POLLIN) != 0 }
        if items.count > 2 { monitorReadable = items[2].revents != 0 }
    }

    /// Milliseconds until the timer or the next scheduled call is due (rounded up), or -1 (neither: until
    /// something happens).
    private func pollTimeout() -> Int {
        let next = [timer?.next, scheduledCalls.nextDue].compactMap { $0 }.min()
        guard let next else { return -1 }
        let remaining = next - .now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int(seconds) * 1_000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    private func fireTimerIfDue() {
        guard var due = timer else { return }
        let now = ContinuousClock.now
        guard due.next <= now else { return }
        due.next += due.interval
        if due.next <= now { due.next = now + due.interval }  // late by more than a tick: no catch-up burst
        timer = due
        due.tick()
    }

    /// Runs the scheduled calls that are due (a call scheduled by one of them for now runs next turn).
    private func runDueCalls() {
        let now = ContinuousClock.now
        while let call = scheduledCalls.takeDue(asOf: now) { call() }
    }

    // MARK: Receiving

    /// Hands every message waiting on the socket (up to `receiveBurst`) to the handler, in one group.
    private func receiveAvailable() {
        guard let open else { return }
        var received: [[[UInt8]]] = []
        var failed = false
        do {
            while received.count < Self.receiveBurst,
                let frames = try open.socket.receive(appendingPeerKey: open.appendsPeerKey)
            {
                received.append(frames)
            }
            // Still more: the next poll returns at once and this turn's jobs and sends go first.
        } catch {
            failed = true
        }
        if !received.isEmpty { open.onMessages(received) }
        if failed { closeSocket() }
    }

    private func reportHandshakeFailures() {
        guard let open, let monitor = open.monitor, let report = open.onHandshakeFailure else { return }
        for failure in monitor.failures() { report(failure) }
    }

    /// Whether messages wait on the socket, unread.
    var hasUnreadMessages: Bool {
        guard let open else { return false }
        return open.socket.events() & ZMQ_POLLIN != 0
    }

    // MARK: Sending

    /// Sends at once what the socket accepts, after the messages that wait; keeps the rest in order.
    func send<Messages: Collection<[[UInt8]]>>(_ messages: Messages) {
        guard let open else {
            posts.dropped.add(messages.count, ordering: .relaxed)
            return
        }
        do {
            note(try backlog.send(messages, on: open.socket))
        } catch {
            closeSocket()
        }
    }

    private func flushBacklog() {
        guard let open else { return }
        do {
            note(try backlog.flush(on: open.socket))
        } catch {
            closeSocket()
        }
    }

    private func note(_ outcome: SendBacklog.Outcome) {
        posts.backlogCount.store(backlog.count, ordering: .relaxed)
        guard !outcome.unroutable.isEmpty else { return }
        posts.dropped.add(outcome.unroutable.count, ordering: .relaxed)
        unroutable.append(contentsOf: outcome.unroutable)
    }

    private func reportUnroutable() {
        guard !unroutable.isEmpty else { return }
        let identities = unroutable
        unroutable = []
        guard let report = open?.onUnroutable else { return }
        for identity in identities { report(identity) }
    }

    // MARK: Opening and closing

    /// Creates the socket, applies `options`, binds and connects it; returns the first bound endpoint.
    func openSocket(
        context: MessagingContext, kind: SocketKind, options: SocketOptions, bind: [String], connect: [String],
        appendsPeerKey: Bool, onMessages: @escaping @Sendable ([[[UInt8]]]) -> Void,
        onUnroutable: (@Sendable ([UInt8]) -> Void)?, onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
    ) throws -> String? {
        precondition(open == nil, "the executor's socket is open already: close it first")
        let (socket, monitor, endpoint) = try Socket.opened(
            context: context, kind: kind, options: options, bind: bind, connect: connect,
            monitored: onHandshakeFailure != nil)
        open = OpenSocket(
            socket: socket, monitor: monitor, context: context, appendsPeerKey: appendsPeerKey,
            onMessages: onMessages, onUnroutable: onUnroutable, onHandshakeFailure: onHandshakeFailure)
        // Messages may wait already (a peer connected between bind and now): the first turn looks.
        socketReadable = true
        posts.markSocketOpen()
        return endpoint
    }

    /// Sends what the socket accepts now (the linger bounds how long libzmq may still take for it),
    /// drops the rest, closes the monitor and the socket, and resumes whoever waits for the close.
    func closeSocket() {
        if let open {
            if !backlog.isEmpty { _ = try? backlog.flush(on: open.socket) }
            posts.dropped.add(backlog.dropAll(), ordering: .relaxed)
            posts.backlogCount.store(0, ordering: .relaxed)
            open.monitor?.close()
            open.socket.close()
            self.open = nil
            socketReadable = false
            monitorReadable = false
        }
        for waiter in posts.markSocketClosed() { waiter.resume() }
    }

    /// Whether a socket is open.
    var isSocketOpen: Bool { open != nil }

    /// Calls `tick` on the thread every `interval`, first one `interval` from now (replacing any timer).
    func startTimer(every interval: Duration, _ tick: @escaping @Sendable () -> Void) {
        timer = Timer(interval: interval, next: .now + interval, tick: tick)
    }

    func stopTimer() {
        timer = nil
    }

    /// Calls `call` on the thread once, at `due` or soon after.
    func schedule(at due: ContinuousClock.Instant, _ call: @escaping @Sendable () -> Void) {
        scheduledCalls.schedule(at: due, call)
    }

    /// Drops every scheduled call not yet run.
    func cancelScheduledCalls() {
        scheduledCalls.removeAll()
    }
}
