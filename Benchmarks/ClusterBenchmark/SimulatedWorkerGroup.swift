import CEpoll
import ClusterSimulation
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
    /// Messages that did not decode; connections refused or lost (reset, or a malformed ZMTP frame).
    let malformed = Atomic<Int>(0)
    let connectionFailures = Atomic<Int>(0)
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

/// Simulated workers driven by one thread: each a DEALER socket of its own, speaking the real protocol
/// (`WorkerHello`, heartbeats with the tasks held, batched results, `WorkerGoodbye`) and answering each
/// task at once or after a fixed delay: a no-op task with an empty output, a photo's download and
/// tilt-shift with what a real worker sends for them (`SimulatedPhotoWorker`: metadata only, the bytes
/// "held" on the worker and "written" to the sink). As a real worker does, no-op results of one wake-up
/// go in batch messages, a photo task's result in a message of its own. Each worker is a TCP connection
/// on which it speaks ZeroMQ's protocol as a DEALER itself (`ZMTPConnection`, `ZMTPFraming`), which a
/// libzmq ROUTER cannot tell from a libzmq DEALER. The thread opens, polls (`epoll`) and closes its
/// connections; no other thread touches them or this object's state (hence `@unchecked Sendable`: only
/// `counters` is shared).
final class SimulatedWorkerGroup: @unchecked Sendable {
    private struct SimulatedWorker {
        let id: String
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

    private let address: sockaddr_in
    private let slots: UInt32
    private let taskDelayNs: UInt64
    private let counters: SimulationCounters
    private var workers: [SimulatedWorker]
    /// Fixed delay: the task runs in the order they end (a chained tilt-shift takes the delay after its download).
    private var delayed: DelayedRunQueue
    private var dirty: [Int] = []
    /// Each worker's connection and the reader of what it receives (apart, so that handling a message
    /// read by one may queue output on the other).
    private var connections: [ZMTPConnection]
    private var readers: [ZMTPReader]
    /// Connections with output queued since the last flush, and a flag per connection for being listed there.
    private var unflushed: [Int] = []
    private var isUnflushed: [Bool]
    private var poller: Int32 = -1
    /// The no-op assignments of the message being read (the fast path's scratch space).
    private var scanned: [NoopAssignment] = []
    /// Tasks answered per worker, filled in when the thread ends.
    private let answeredPerWorker = Mutex<[Int]>([])
    /// Photo mode: the attempts received for each task key (a key received twice is a task sent twice),
    /// kept while the thread runs and published when it ends.
    private var attemptsReceived: [UInt64: [UInt32]] = [:]
    private let attemptsPublished = Mutex<[UInt64: [UInt32]]>([:])

    /// Workers named `PREFIX-N` for each N in `numbers`, connecting to the coordinator at `address` with `slots` each.
    /// Each worker answers photo tasks as `photos` does (a copy each; its held downloads its own).
    init(
        address: sockaddr_in, numbers: Range<Int>, prefix: String, slots: Int,
        taskDelay: Duration, photos: SimulatedPhotoWorker = SimulatedPhotoWorker(), counters: SimulationCounters
    ) {
        self.address = address
        self.slots = UInt32(max(1, slots))
        let parts = taskDelay.components
        let delayNs = UInt64(max(0, parts.seconds)) * 1_000_000_000 + UInt64(max(0, parts.attoseconds / 1_000_000_000))
        self.taskDelayNs = delayNs
        self.delayed = DelayedRunQueue(delayNs: delayNs)
        self.counters = counters
        let workers = numbers.map { SimulatedWorker(id: "\(prefix)-\($0)", photos: photos) }
        self.workers = workers
        self.connections = workers.map { ZMTPConnection(identity: Array($0.id.utf8)) }
        self.readers = workers.map { _ in ZMTPReader() }
        self.isUnflushed = workers.map { _ in false }
    }

    /// The thread's ID (`gettid`), once it runs: its CPU time is the simulator's, apart from the client's.
    let threadID = Atomic<Int32>(0)

    /// Tasks each worker answered; complete once the thread has ended.
    var tasksAnswered: [Int] { answeredPerWorker.withLock { $0 } }

    /// Photo mode: the attempts this thread's workers received per task key; complete once the thread has ended.
    var attemptsPerTask: [UInt64: [UInt32]] { attemptsPublished.withLock { $0 } }

    /// The thread's body: connects every worker, serves until `counters.stop`, then says goodbye and closes.
    ///
    /// The connections are watched with one `epoll` set (level-triggered), so a wake-up costs in proportion
    /// to the connections that have something; each is read with one `recv` into the thread's buffer and
    /// parsed there, and everything a worker says in a wake-up leaves in one `send`.
    func run() {
        threadID.store(shiftwork_thread_id(), ordering: .releasing)
        poller = epoll_create1(0)
        guard poller >= 0 else { fatalError("epoll_create1: \(String(cString: strerror(errno)))") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        let now = Self.nowNs()
        for index in workers.indices {
            open(index, now: now)
            sayHello(index, now: now)
            // Heartbeats spread over the first second, as workers started at different times would send them.
            workers[index].nextHeartbeatNs = now + UInt64.random(in: 0..<1_000_000_000)
        }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var nextSweepNs: UInt64 = 0
        while !counters.stop.load(ordering: .relaxed) {
            var timeoutMs: Int32 = 5
            if let due = delayed.nextDueNs {
                let now = Self.nowNs()
                timeoutMs = due <= now ? 0 : min(timeoutMs, Int32((due - now) / 1_000_000) + 1)
            }
            if !dirty.isEmpty || !unflushed.isEmpty { timeoutMs = 0 }  // results or messages queued
            let ready = epoll_wait(poller, &events, Int32(events.count), timeoutMs)
            let now = Self.nowNs()
            if ready > 0 {
                for event in events[0..<Int(ready)] {
                    service(Int(event.data.u32), events: event.events, buffer: buffer, now: now)
                }
            }
            releaseDueResults(now: now)
            flushResults()
            if now >= nextSweepNs {
                sendHeartbeats(now: now)
                for index in connections.indices
                where connections[index].state == .idle && connections[index].retryAtNs <= now {
                    open(index, now: now)
                }
                nextSweepNs = now + 20_000_000
            }
            flushConnections(now: now)
        }
        for index in workers.indices {
            send(.workerGoodbye(WorkerGoodbye(workerID: workers[index].id)), to: index)
        }
        flushConnections(now: Self.nowNs())
        for index in connections.indices { connections[index].close() }
        close(poller)
        let answered = workers.map(\.tasksAnswered)
        answeredPerWorker.withLock { $0 = answered }
        let attempts = attemptsReceived
        attemptsPublished.withLock { $0 = attempts }
    }

    /// Connects the worker (again); a failure to start is retried at the next sweep after 100 ms.
    private func open(_ index: Int, now: UInt64) {
        if let error = connections[index].connect(to: address, poller: poller, tag: UInt32(index)) {
            lost(index, now: now, error)
        }
    }

    /// What `epoll` reported for the worker's connection: connected, room to write, bytes to read, or closed.
    private func service(_ index: Int, events: UInt32, buffer: UnsafeMutableRawBufferPointer, now: UInt64) {
        if connections[index].state == .connecting {
            guard connections[index].finishConnecting(nowNs: now) else { return }  // refused: retried by the sweep
            readers[index] = ZMTPReader()
            markUnflushed(index)
        }
        if events & EPOLLOUT.rawValue != 0 { markUnflushed(index) }
        guard events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 else { return }
        while connections[index].state == .open || connections[index].state == .handshaking {
            let count = recv(connections[index].descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                do {
                    try readers[index].read(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { event in
                        switch event {
                        case .message(let bytes): receive(bytes, worker: index)
                        case .command(let name, let body): command(name, body, worker: index)
                        }
                    }
                } catch {
                    return lost(index, now: now, "\(error) from the coordinator")
                }
                if count < buffer.count { return }
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return
            } else {
                return lost(
                    index, now: now,
                    count == 0 ? "closed by the coordinator" : "recv: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// A ZMTP command from the coordinator's socket: its READY lets the worker's messages go; a PING
    /// (heartbeats, if it turns them on) is answered; an ERROR ends the connection.
    private func command(_ name: String, _ body: ArraySlice<UInt8>, worker index: Int) {
        if name == "READY" {
            markUnflushed(index)
            connections[index].peerIsReady()
        } else if name == "PING", body.count >= 2 {
            let pong = ZMTPFraming.pong(context: body.dropFirst(2))
            markUnflushed(index)
            pong.withUnsafeBytes { connections[index].queueRaw($0) }
        } else if name == "ERROR" {
            lost(
                index, now: Self.nowNs(),
                "ZMTP ERROR from the coordinator: \(String(decoding: body.dropFirst(), as: UTF8.self))")
        }
    }

    /// The connection broke (or could not start): counted, the first reason on stderr, and connected again
    /// after 100 ms (the coordinator refuses the next heartbeat if it forgot the worker meanwhile, and the
    /// worker says hello again).
    private func lost(_ index: Int, now: UInt64, _ reason: String) {
        if counters.connectionFailures.add(1, ordering: .relaxed).newValue == 1 {
            FileHandle.standardError.write(
                Data("ClusterBenchmark: simulated worker \(workers[index].id): \(reason)\n".utf8))
        }
        connections[index].drop(retryAtNs: now + 100_000_000)
    }

    private func markUnflushed(_ index: Int) {
        guard !isUnflushed[index] else { return }
        isUnflushed[index] = true
        unflushed.append(index)
    }

    /// Writes every connection's queued output (each worker's messages of this wake-up in one `send`).
    private func flushConnections(now: UInt64) {
        for index in unflushed {
            isUnflushed[index] = false
            if !connections[index].flush(poller: poller, tag: UInt32(index)) {
                lost(index, now: now, "send: \(String(cString: strerror(errno)))")
            }
        }
        unflushed.removeAll(keepingCapacity: true)
    }

    private func sayHello(_ index: Int, now: UInt64) {
        workers[index].helloSentNs = now
        send(
            .workerHello(
                WorkerHello(
                    workerID: workers[index].id, slots: slots, version: "simulation",
                    hostname: "simulation", acceptsBatches: true,
                    acceptsChainedTasks: workers[index].photos.chaining.announced)), to: index)
        counters.hellos.add(1, ordering: .relaxed)
    }

    /// A message from the coordinator: no-op assignments through the fast path, anything else decoded whole.
    private func receive(_ bytes: UnsafeRawBufferPointer, worker index: Int) {
        if taskDelayNs == 0, NoopAssignmentScan.scan(bytes, into: &scanned) {
            answerAtOnce(scanned, in: bytes, worker: index)
            scanned.removeAll(keepingCapacity: true)
            return
        }
        let decoded: Message
        do {
            decoded = try WireCodec.decode(bytes)
        } catch {
            counters.malformed.add(1, ordering: .relaxed)
            return
        }
        for part in MessageBatching.unbatched(decoded) { handle(part, worker: index) }
    }

    /// The fast path: no-op tasks answered at once, their results written straight into the bytes of the
    /// messages that will carry them (`NoopResultWriter`), the task IDs copied from the received `bytes`.
    private func answerAtOnce(_ assignments: [NoopAssignment], in bytes: UnsafeRawBufferPointer, worker index: Int) {
        if !hasResults(index) { dirty.append(index) }
        for assignment in assignments {
            workers[index].lastSequence = max(workers[index].lastSequence, assignment.sequence)
            workers[index].noopResults.add(
                taskID: UnsafeRawBufferPointer(rebasing: bytes[assignment.taskID]),
                attempt: assignment.attempt, taskKey: assignment.taskKey)
        }
        counters.assignments.add(assignments.count, ordering: .relaxed)
    }

    private func hasResults(_ index: Int) -> Bool {
        workers[index].noopResults.count > 0 || !workers[index].outgoing.isEmpty
            || !workers[index].outgoingAlone.isEmpty
    }

    private func handle(_ message: Message, worker index: Int) {
        switch message {
        case .taskAssignment(let assignment):
            counters.assignments.add(1, ordering: .relaxed)
            workers[index].lastSequence = max(workers[index].lastSequence, assignment.sequence)
            let runs = workers[index].photos.runs(
                answering: assignment, coordinatorAcceptsBatches: workers[index].acceptsBatches)
            let alone = assignment.kind != .noop
            if alone {
                attemptsReceived[assignment.taskKey, default: []].append(assignment.attempt)
                if let followOn = assignment.followOn {
                    attemptsReceived[followOn.taskKey, default: []].append(followOn.attempt)
                }
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
                delayed.start(
                    runs, worker: index, registration: workers[index].registration, alone: alone, now: Self.nowNs())
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
            if refusal.code == .unknownWorker, now - workers[index].helloSentNs > 2 * workers[index].heartbeatIntervalNs
            {
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
        delayed.end(upTo: now, isCurrent: { worker, registration in workers[worker].registration == registration }) {
            ended in
            queue(ended.messagesAtEnd, alone: ended.alone, for: ended.worker)
            if let next = ended.nextTaskKey {
                // As a real worker: the chained run starts in the slot now, its result (and a held-back one) later.
                workers[ended.worker].holding.insert(next)
            } else {
                workers[ended.worker].running -= 1
            }
        }
    }

    /// Queues each worker's results of this wake-up, no-op ones in batch messages when the coordinator takes
    /// them and photo ones as `Worker.finished` sends them (each alone as its task ends, or a download's with
    /// its chained tilt-shift's in one batch).
    private func flushResults() {
        for index in dirty {
            let noopCount = workers[index].noopResults.count
            if noopCount > 0 {
                markUnflushed(index)
                workers[index].noopResults.flush(batches: workers[index].acceptsBatches) {
                    connections[index].queue($0)
                }
                workers[index].tasksAnswered += noopCount
                counters.results.add(noopCount, ordering: .relaxed)
            }
            let results = workers[index].outgoing
            let alone = workers[index].outgoingAlone
            workers[index].outgoing.removeAll(keepingCapacity: true)
            workers[index].outgoingAlone.removeAll(keepingCapacity: true)
            let aloneCount = alone.reduce(0) { $0 + $1.count }
            if taskDelayNs > 0 {
                for result in results + alone.joined() { workers[index].holding.remove(result.taskKey) }
            }
            let messages = results.map(Message.taskResult)
            for message in workers[index].acceptsBatches ? MessageBatching.coalesce(messages) : messages {
                send(message, to: index)
            }
            for message in alone {
                send(message.count == 1 ? .taskResult(message[0]) : .taskResults(message), to: index)
            }
            workers[index].tasksAnswered += results.count + aloneCount
            counters.results.add(results.count + aloneCount, ordering: .relaxed)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    private func sendHeartbeats(now: UInt64) {
        for index in workers.indices where workers[index].nextHeartbeatNs <= now {
            let worker = workers[index]
            send(
                .heartbeat(
                    Heartbeat(
                        workerID: worker.id, running: UInt32(worker.running),
                        lastSequence: worker.lastSequence, holding: Array(worker.holding))), to: index)
            workers[index].nextHeartbeatNs = now + worker.heartbeatIntervalNs
            counters.heartbeats.add(1, ordering: .relaxed)
        }
    }

    /// Queues `message` on the worker's connection (written at the end of the wake-up; while it connects,
    /// once it has).
    private func send(_ message: Message, to index: Int) {
        markUnflushed(index)
        WireCodec.encode(message).withUnsafeBytes { connections[index].queue($0) }
    }

    private static func nowNs() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
