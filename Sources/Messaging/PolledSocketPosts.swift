import Glibc
import Runtime
import Synchronization

/// What other threads hand to a ``PolledSocketExecutor``'s thread: jobs to run, messages to send, a
/// request to close the socket or to stop, and whether the thread sleeps in `zmq_poll` (then a post
/// wakes it through the `eventfd`; while it is awake it finds the post on its next turn, without a
/// system call). Everything mutable is behind one mutex or atomic; the socket is not here.
final class PolledSocketPosts: Sendable {
    struct Posted {
        var jobs: [(UnownedJob, UnownedSerialExecutor)] = []
        var outbox: [[[UInt8]]] = []
        var closeRequested = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// No socket is open (not yet, or no longer): sends are dropped.
        var socketClosed = true
        var stopped = false
        var sleeping = false
    }

    /// The thread's work, taken in one go.
    struct Taken {
        var jobs: [(UnownedJob, UnownedSerialExecutor)]
        var outbox: [[[UInt8]]]
        var closeRequested: Bool
        var stopped: Bool
    }

    private let posted = InlineLock(Posted())
    let wakeEvent: WakeEvent
    /// The thread's `pthread_t`, set first thing on the thread.
    private let thread = Atomic<UInt>(0)
    /// Messages dropped: unroutable, sent after close, or left when the socket closed while blocked.
    let dropped = Atomic<Int>(0)
    /// Messages the socket has not accepted yet (kept by the thread's `SendBacklog`).
    let backlogCount = Atomic<Int>(0)

    init() throws {
        wakeEvent = try WakeEvent()
    }

    /// Called first thing on the thread.
    func markCurrentThread() {
        thread.store(pthread_self(), ordering: .releasing)
    }

    /// Whether the caller runs on the executor's thread.
    var isCurrentThread: Bool {
        let owner = thread.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(owner, pthread_self()) != 0
    }

    private func post(_ change: (inout Posted) -> Void) {
        let wake = posted.withLock { box -> Bool in
            change(&box)
            defer { box.sleeping = false }
            return box.sleeping
        }
        if wake { wakeEvent.signal() }
    }

    func enqueue(_ job: UnownedJob, on executor: UnownedSerialExecutor) {
        post { $0.jobs.append((job, executor)) }
    }

    /// Queues messages for the thread to send; drops and counts them once the socket is closed.
    func enqueue<Messages: Collection<[[UInt8]]>>(_ messages: Messages) {
        var refused = false
        post { box in
            if box.socketClosed || box.closeRequested {
                refused = true
            } else {
                box.outbox.append(contentsOf: messages)
            }
        }
        if refused { dropped.add(messages.count, ordering: .relaxed) }
    }

    /// Messages posted from other threads and not yet taken by the thread.
    var outboxCount: Int { posted.withLock { $0.outbox.count } }

    /// Asks the thread to close the socket; returns when it has.
    func requestClose() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var closed = false
            post { box in
                if box.socketClosed {
                    closed = true
                } else {
                    box.closeRequested = true
                    box.closeWaiters.append(continuation)
                }
            }
            if closed { continuation.resume() }
        }
    }

    func stop() {
        post { $0.stopped = true }
    }

    /// On the thread: everything posted since the last call.
    func take() -> Taken {
        posted.withLock { box in
            box.sleeping = false
            defer {
                box.jobs = []
                box.outbox = []
                box.closeRequested = false
            }
            return Taken(jobs: box.jobs, outbox: box.outbox, closeRequested: box.closeRequested, stopped: box.stopped)
        }
    }

    /// On the thread, before `zmq_poll`: `true` (and the thread counts as asleep) when nothing was posted
    /// since `take()`; `false` when it should take again first.
    func prepareToSleep() -> Bool {
        posted.withLock { box in
            let idle = box.jobs.isEmpty && box.outbox.isEmpty && !box.closeRequested && !box.stopped
            box.sleeping = idle
            return idle
        }
    }

    /// On the thread: the socket is closed; sends are refused from now on. Returns whoever waits for it.
    func markSocketClosed() -> [CheckedContinuation<Void, Never>] {
        posted.withLock { box in
            box.socketClosed = true
            box.closeRequested = false
            defer { box.closeWaiters = [] }
            dropped.add(box.outbox.count, ordering: .relaxed)
            box.outbox = []
            return box.closeWaiters
        }
    }

    /// On the thread, once a socket is open: sends are accepted again.
    func markSocketOpen() {
        posted.withLock { $0.socketClosed = false }
    }
}
