import CEpoll
import ClusterSimulation
import CZeroMQ
import Foundation
import Synchronization
import Wire

/// Counters the simulated workers share with the benchmark's main task.
final class SimulationCounters: Sendable {
    /// Task assignments received.
    let assignments = Atomic<Int>(0)
    /// Task results sent.
    let results = Atomic<Int>(0)
    /// Heartbeats sent.
    let heartbeats = Atomic<Int>(0)
    /// `WorkerHello`s sent (the first ones and those after an `unknownWorker` refusal).
    let hellos = Atomic<Int>(0)
    /// `Welcome`s received.
    let welcomes = Atomic<Int>(0)
    /// Refusals received (an `unknownWorker` one means the coordinator had declared the worker dead).
    let refusals = Atomic<Int>(0)
    /// Messages that did not decode, and sends that failed (a full queue).
    let malformed = Atomic<Int>(0)
    let sendFailures = Atomic<Int>(0)
    /// Photo tasks answered, by kind, and the answers that were failures (photo mode).
    let downloadsAnswered = Atomic<Int>(0)
    let tiltShiftsAnswered = Atomic<Int>(0)
    let failedAnswers = Atomic<Int>(0)
    /// Set by the main task to end every group.
    let stop = Atomic<Bool>(false)
    /// Groups whose thread has ended.
    let finishedThreads = Atomic<Int>(0)

    init() {}
}

/// A ZeroMQ context handed to the threads that open sockets in it (a context is thread-safe; a socket is not).
struct SimulationContext: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// Simulated workers driven by one thread: each a DEALER socket of its own, speaking the real protocol
/// (`WorkerHello`, heartbeats with the tasks held, batched results, `WorkerGoodbye`) and answering each
/// task at once or after a fixed delay: a no-op task with an empty output, a photo's download and
/// tilt-shift with what a real worker sends for them (`SimulatedPhotoWorker`: metadata only, the bytes
/// "held" on the worker and "written" to the sink). As a real worker does, no-op results of one wake-up
/// go in batch messages, a photo task's result in a message of its own. The thread opens, polls (`epoll`)
/// and closes its sockets; no other thread touches them or this object's state (hence
/// `@unchecked Sendable`: only `counters` is shared).
final class SimulatedWorkerGroup: @unchecked Sendable {
    private struct SimulatedWorker {
        let id: String
        var socket: UnsafeMutableRawPointer?
        var acceptsBatches = false
        var heartbeatIntervalNs: UInt64 = 1_000_000_000
        var nextHeartbeatNs: UInt64 = 0
        var helloSentNs: UInt64 = 0
        var lastSequence: UInt64 = 0
        /// Keys of the tasks received and not answered yet (fixed-delay tasks), reported in heartbeats.
        var holding: Set<UInt64> = []
        /// Assignments running (fixed-delay tasks; a download and its chained tilt-shift are one, one after
        /// the other in the slot), reported in heartbeats as a real worker's running tasks.
        var running = 0
        /// Results to send at the end of this wake-up: no-op ones answered at once (written straight as
        /// their messages' bytes), no-op ones after a delay (batched), and photo ones (each message's results:
        /// one alone, or a download's and its chained tilt-shift's together).
        var noopResults = NoopResultWriter()
        var outgoing: [TaskResult] = []
        var outgoingAlone: [[TaskResult]] = []
        /// Its photo answers, and the downloads it "holds" for their tilt-shift.
        var photos: SimulatedPhotoWorker
        /// Raised by each `Welcome`: delayed results of an earlier registration are dropped.
        var registration = 0
        var tasksAnswered = 0
    }

    private let context: SimulationContext
    private let endpoint: String
    private let slots: UInt32
    private let taskDelayNs: UInt64
    private let counters: SimulationCounters
    private var workers: [SimulatedWorker]
    /// Fixed delay: the task runs in the order they end (a chained tilt-shift takes the delay after its download).
    private var delayed: DelayedRunQueue
    private var dirty: [Int] = []
    /// The no-op assignments of the message being read (the fast path's scratch space).
    private var scanned: [NoopAssignment] = []
    /// Tasks answered per worker, filled in when the thread ends.
    private let answeredPerWorker = Mutex<[Int]>([])

    /// Workers named `PREFIX-N` for each N in `numbers`, connecting to `endpoint` with `slots` each.
    /// Each worker answers photo tasks as `photos` does (a copy each; its held downloads its own).
    init(context: SimulationContext, endpoint: String, numbers: Range<Int>, prefix: String, slots: Int,
         taskDelay: Duration, photos: SimulatedPhotoWorker = SimulatedPhotoWorker(), counters: SimulationCounters) {
        self.context = context
        self.endpoint = endpoint
        self.slots = UInt32(max(1, slots))
        let parts = taskDelay.components
        let delayNs = UInt64(max(0, parts.seconds)) * 1_000_000_000 + UInt64(max(0, parts.attoseconds / 1_000_000_000))
        self.taskDelayNs = delayNs
        self.delayed = DelayedRunQueue(delayNs: delayNs)
        self.counters = counters
        self.workers = numbers.map { SimulatedWorker(id: "\(prefix)-\($0)", photos: photos) }
    }

    /// Tasks each worker answered; complete once the thread has ended.
    var tasksAnswered: [Int] { answeredPerWorker.withLock { $0 } }

    /// The thread's body: connects every worker, serves until `counters.stop`, then says goodbye and closes.
    ///
    /// The sockets are watched with one `epoll` set over their `ZMQ_FD`s, so a wake-up costs in proportion
    /// to the sockets that have something, not to all of them (`zmq_poll` over 250 sockets asks each for
    /// its events at every wake-up). `ZMQ_FD` signals only that a socket's state may have changed, and a
    /// send can consume that signal: every socket sent to is therefore read right after, and every socket
    /// is read every 20 ms besides, so no message waits unseen.
    func run() {
        for index in workers.indices { open(index) }
        let poller = epoll_create1(0)
        guard poller >= 0 else { fatalError("epoll_create1: \(String(cString: strerror(errno)))") }
        for index in workers.indices { watch(index, in: poller) }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        var nextSweepNs: UInt64 = 0
        while !counters.stop.load(ordering: .relaxed) {
            var timeoutMs: Int32 = 5
            if let due = delayed.nextDueNs {
                let now = Self.nowNs()
                timeoutMs = due <= now ? 0 : min(timeoutMs, Int32((due - now) / 1_000_000) + 1)
            }
            if !dirty.isEmpty { timeoutMs = 0 }  // results queued by the last reads
            let ready = epoll_wait(poller, &events, Int32(events.count), timeoutMs)
            if ready > 0 {
                for event in events[0..<Int(ready)] { receive(Int(event.data.u32), into: &message) }
            }
            let now = Self.nowNs()
            releaseDueResults(now: now)
            flush(into: &message)
            if now >= nextSweepNs {
                sendHeartbeats(now: now)
                for index in workers.indices { receive(index, into: &message) }
                nextSweepNs = now + 20_000_000
            }
        }
        close(poller)
        zmq_msg_close(&message)
        for index in workers.indices {
            send(.workerGoodbye(WorkerGoodbye(workerID: workers[index].id)), to: index)
            zmq_close(workers[index].socket)
            workers[index].socket = nil
        }
        let answered = workers.map(\.tasksAnswered)
        answeredPerWorker.withLock { $0 = answered }
    }

    /// Adds the worker's socket (its `ZMQ_FD`) to the `epoll` set, tagged with its index.
    private func watch(_ index: Int, in poller: Int32) {
        var descriptor: Int32 = -1
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(workers[index].socket, ZMQ_FD, &descriptor, &size) == 0 else {
            fatalError("zmq_getsockopt(ZMQ_FD): \(String(cString: zmq_strerror(zmq_errno())))")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u32 = UInt32(index)
        guard epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            fatalError("epoll_ctl: \(String(cString: strerror(errno)))")
        }
    }

    private func open(_ index: Int) {
        guard let socket = zmq_socket(context.pointer, ZMQ_DEALER) else {
            fatalError("zmq_socket: \(String(cString: zmq_strerror(zmq_errno()))) (raise ulimit -n?)")
        }
        let identity = Array(workers[index].id.utf8)
        var linger: Int32 = 0
        var unlimited: Int32 = 0
        zmq_setsockopt(socket, ZMQ_IDENTITY, identity, identity.count)
        zmq_setsockopt(socket, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
        zmq_setsockopt(socket, ZMQ_SNDHWM, &unlimited, MemoryLayout<Int32>.size)
        zmq_setsockopt(socket, ZMQ_RCVHWM, &unlimited, MemoryLayout<Int32>.size)
        guard zmq_connect(socket, endpoint) == 0 else {
            fatalError("zmq_connect \(endpoint): \(String(cString: zmq_strerror(zmq_errno())))")
        }
        workers[index].socket = socket
        sayHello(index, now: Self.nowNs())
        // Heartbeats spread over the first second, as workers started at different times would send them.
        workers[index].nextHeartbeatNs = Self.nowNs() + UInt64.random(in: 0..<1_000_000_000)
    }

    private func sayHello(_ index: Int, now: UInt64) {
        workers[index].helloSentNs = now
        send(.workerHello(WorkerHello(workerID: workers[index].id, slots: slots, version: "simulation",
                                      hostname: "simulation", acceptsBatches: true,
                                      acceptsChainedTasks: workers[index].photos.chaining.announced)), to: index)
        counters.hellos.add(1, ordering: .relaxed)
    }

    /// Reads every message waiting on the worker's socket (its last frame is the payload).
    private func receive(_ index: Int, into message: inout zmq_msg_t) {
        guard let socket = workers[index].socket else { return }
        while zmq_msg_recv(&message, socket, ZMQ_DONTWAIT) >= 0 {
            if zmq_msg_more(&message) != 0 { continue }
            let bytes = UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: zmq_msg_size(&message))
            if taskDelayNs == 0, NoopAssignmentScan.scan(bytes, into: &scanned) {
                answerAtOnce(scanned, in: bytes, worker: index)
                scanned.removeAll(keepingCapacity: true)
                continue
            }
            let decoded: Message
            do {
                decoded = try WireCodec.decode(bytes)
            } catch {
                counters.malformed.add(1, ordering: .relaxed)
                continue
            }
            for part in MessageBatching.unbatched(decoded) { handle(part, worker: index) }
        }
    }

    /// The fast path: no-op tasks answered at once, their results written straight into the bytes of the
    /// messages that will carry them (`NoopResultWriter`), the task IDs copied from the received `bytes`.
    private func answerAtOnce(_ assignments: [NoopAssignment], in bytes: UnsafeRawBufferPointer, worker index: Int) {
        if !hasResults(index) { dirty.append(index) }
        for assignment in assignments {
            workers[index].lastSequence = max(workers[index].lastSequence, assignment.sequence)
            workers[index].noopResults.add(taskID: UnsafeRawBufferPointer(rebasing: bytes[assignment.taskID]),
                                           attempt: assignment.attempt, taskKey: assignment.taskKey)
        }
        counters.assignments.add(assignments.count, ordering: .relaxed)
    }

    private func hasResults(_ index: Int) -> Bool {
        workers[index].noopResults.count > 0 || !workers[index].outgoing.isEmpty || !workers[index].outgoingAlone.isEmpty
    }

    private func handle(_ message: Message, worker index: Int) {
        switch message {
        case .taskAssignment(let assignment):
            counters.assignments.add(1, ordering: .relaxed)
            workers[index].lastSequence = max(workers[index].lastSequence, assignment.sequence)
            let runs = workers[index].photos.runs(answering: assignment, coordinatorAcceptsBatches: workers[index].acceptsBatches)
            let alone = assignment.kind != .noop
            if alone {
                for result in runs.flatMap(\.messagesAtEnd).joined() {
                    count(result, of: result.taskKey == assignment.taskKey ? assignment.kind : .tiltShift)
                }
            }
            if taskDelayNs == 0 {
                queue(Array(runs.map(\.messagesAtEnd).joined()), alone: alone, for: index)
            } else if let first = runs.first {
                // Each run takes the delay: a chained tilt-shift starts when its download's run ends.
                workers[index].holding.insert(first.taskKey)
                workers[index].running += 1
                delayed.start(runs, worker: index, registration: workers[index].registration, alone: alone, now: Self.nowNs())
            }
        case .welcome(let welcome):
            counters.welcomes.add(1, ordering: .relaxed)
            workers[index].registration += 1
            workers[index].acceptsBatches = welcome.acceptsBatches
            workers[index].holding.removeAll()
            workers[index].running = 0
            workers[index].noopResults.removeAll()
            workers[index].outgoing.removeAll()
            workers[index].outgoingAlone.removeAll()
            workers[index].photos.forgetAll()
            workers[index].lastSequence = 0
            if welcome.heartbeatIntervalMs > 0 {
                workers[index].heartbeatIntervalNs = UInt64(max(100, welcome.heartbeatIntervalMs)) * 1_000_000
            }
        case .refusal(let refusal):
            counters.refusals.add(1, ordering: .relaxed)
            // As a real worker: register again, once per two heartbeat intervals at most.
            let now = Self.nowNs()
            if refusal.code == .unknownWorker, now - workers[index].helloSentNs > 2 * workers[index].heartbeatIntervalNs {
                sayHello(index, now: now)
            }
        default:
            break  // cancels: the result (sent anyway) confirms them
        }
    }

    private func queue(_ messages: [[TaskResult]], alone: Bool, for index: Int) {
        guard !messages.isEmpty else { return }
        if !hasResults(index) { dirty.append(index) }
        if alone {
            workers[index].outgoingAlone.append(contentsOf: messages)
        } else {
            workers[index].outgoing.append(contentsOf: messages.joined())
        }
    }

    private func count(_ result: TaskResult, of kind: TaskKind) {
        if kind == .download { counters.downloadsAnswered.add(1, ordering: .relaxed) }
        if kind == .tiltShift { counters.tiltShiftsAnswered.add(1, ordering: .relaxed) }
        if case .failure = result.outcome { counters.failedAnswers.add(1, ordering: .relaxed) }
    }

    private func releaseDueResults(now: UInt64) {
        delayed.end(upTo: now, isCurrent: { worker, registration in workers[worker].registration == registration }) { ended in
            queue(ended.messagesAtEnd, alone: ended.alone, for: ended.worker)
            if let next = ended.nextTaskKey {
                // As a real worker: the chained run starts in the slot now, its result (and a held-back one) later.
                workers[ended.worker].holding.insert(next)
            } else {
                workers[ended.worker].running -= 1
            }
        }
    }

    /// Sends each worker's results of this wake-up, no-op ones in batch messages when the coordinator takes
    /// them and photo ones as `Worker.finished` sends them (each alone as its task ends, or a download's with
    /// its chained tilt-shift's in one batch), then reads the worker's
    /// socket (the send may have taken the signal of a message that came meanwhile).
    private func flush(into message: inout zmq_msg_t) {
        for index in dirty {
            let noopCount = workers[index].noopResults.count
            if noopCount > 0, let socket = workers[index].socket {
                workers[index].noopResults.flush(batches: workers[index].acceptsBatches) { bytes in
                    if zmq_send(socket, bytes.baseAddress, bytes.count, ZMQ_DONTWAIT) < 0 {
                        counters.sendFailures.add(1, ordering: .relaxed)
                    }
                }
                workers[index].tasksAnswered += noopCount
                counters.results.add(noopCount, ordering: .relaxed)
            }
            let results = workers[index].outgoing
            let alone = workers[index].outgoingAlone
            workers[index].outgoing.removeAll(keepingCapacity: true)
            workers[index].outgoingAlone.removeAll(keepingCapacity: true)
            let aloneCount = alone.reduce(0) { $0 + $1.count }
            if taskDelayNs > 0 { for result in results + alone.joined() { workers[index].holding.remove(result.taskKey) } }
            let messages = results.map(Message.taskResult)
            for message in workers[index].acceptsBatches ? MessageBatching.coalesce(messages) : messages {
                send(message, to: index)
            }
            for message in alone { send(message.count == 1 ? .taskResult(message[0]) : .taskResults(message), to: index) }
            workers[index].tasksAnswered += results.count + aloneCount
            counters.results.add(results.count + aloneCount, ordering: .relaxed)
        }
        let sentTo = dirty
        dirty.removeAll(keepingCapacity: true)
        for index in sentTo { receive(index, into: &message) }
    }

    private func sendHeartbeats(now: UInt64) {
        for index in workers.indices where workers[index].nextHeartbeatNs <= now {
            let worker = workers[index]
            send(.heartbeat(Heartbeat(workerID: worker.id, running: UInt32(worker.running),
                                      lastSequence: worker.lastSequence, holding: Array(worker.holding))), to: index)
            workers[index].nextHeartbeatNs = now + worker.heartbeatIntervalNs
            counters.heartbeats.add(1, ordering: .relaxed)
        }
    }

    private func send(_ message: Message, to index: Int) {
        guard let socket = workers[index].socket else { return }
        let bytes = WireCodec.encode(message)
        let sent = bytes.withUnsafeBytes { zmq_send(socket, $0.baseAddress, $0.count, ZMQ_DONTWAIT) }
        if sent < 0 { counters.sendFailures.add(1, ordering: .relaxed) }
    }

    private static func nowNs() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
