import Logging
import Wire

/// The coordinator's decisions in one value: the dispatcher (which worker runs what), the batch registry
/// (what each client is told) and each batch's running items (`BatchRun`, `ItemRun`: the engine's rules
/// of dependency, injection, retries and cancellation) live here, and every event goes through `handle`,
/// one at a time, returning the effects to carry out in order (`CoreEffect`: journal records before the
/// messages they make durable, messages, timers, log lines). Free of I/O and of clocks: each event comes
/// with the instant it is taken at, so every rule is tested event by event without sockets
/// (Tests/ClusterTests/Units/CoordinatorCoreTests).
struct CoordinatorCore {
    /// How the core is set up (from `CoordinatorConfiguration`).
    struct Settings {
        var maxDownloadsPerHost = ClusterDefaults.maxDownloadsPerHost
        var scheduling = SchedulingPolicy.fairShare
        /// This start's number on the journal (1 without one); task attempts are numbered from it.
        var incarnation: UInt32 = 1
        /// How long a task attempt may run on its worker (`--task-timeout`).
        var taskTimeout = CoordinatorConfiguration.defaultTaskTimeout
        /// Seeds the random part of retry waits.
        var seed: UInt64 = 0x5EED
        /// Uploaded bytes asked for and held at once (`--upload-window-mb`, `UploadWindow`).
        var uploadWindowBytes = ClusterDefaults.uploadWindowBytes
        /// Received uploads go to the data directory's spool (`--data-dir`).
        var spoolsUploads = false
    }

    /// The item a task key belongs to.
    struct TaskOwner: Hashable {
        let batchID: String
        let itemIndex: Int
    }

    var dispatcher: Dispatcher
    var registry: BatchRegistry
    /// Set before the first event (the journal's incarnation is known once it is open).
    var settings: Settings
    /// The running part of each batch with unfinished items.
    var runs: [String: BatchRun] = [:]
    /// Batches submitted with a deadline.
    var deadlines = BatchDeadlines()
    var downloadTurns: DownloadTurns
    /// Task attempts running on workers, against the task timeout.
    var taskTimeouts: TaskTimeouts
    /// How each batch the registry keeps plans its items, for a retry (`RetryBatch`).
    var rerunPlans: [String: RerunPlan] = [:]
    /// The item each task of a started item belongs to, by key (results are matched by it).
    var owners: [TaskKey: TaskOwner] = [:]
    /// Batches planned whose acceptance the journal has not confirmed yet (`CoreEffect.recordDurably`).
    var pendingAcceptances: [String: PendingAcceptance] = [:]
    /// Retries chosen whose record the journal has not confirmed yet.
    var pendingRetries: [String: PendingRetry] = [:]
    /// Uploaded files: what is asked of which client, and the bytes held (docs/protocol.md, "Uploads").
    var uploads: UploadWindow
    private var random: SplitMix64
    /// The effects of the event being handled, in order.
    private var effects: [CoreEffect] = []
    /// Messages to send after `effects`, gathered into one `CoreEffect.send` (appended as they come: a
    /// burst of results costs one array, not a copy per message).
    private var sending: [Outbound] = []
    /// The instant and wall clock of the event being handled.
    private var now = ContinuousClock.now
    private var wallClockMilliseconds: UInt64 = 0

    init(dispatcher: Dispatcher, registry: BatchRegistry, settings: Settings = Settings()) {
        self.dispatcher = dispatcher
        self.registry = registry
        self.settings = settings
        downloadTurns = DownloadTurns(limit: settings.maxDownloadsPerHost)
        taskTimeouts = TaskTimeouts(limit: settings.taskTimeout)
        random = SplitMix64(seed: settings.seed)
        uploads = UploadWindow(limitBytes: settings.uploadWindowBytes, spools: settings.spoolsUploads)
    }

    /// Tasks accepted and not started: queued in the dispatcher, or not there yet (waiting for their turn
    /// in their batch, a host's place, a retry or their dependency).
    var queuedTaskCount: Int {
        var waiting = 0
        for (batchID, run) in runs {
            for item in run.items.values { waiting += item.tasksWaiting }
            // Every unfinished item not started yet (a started item is unfinished until it leaves `items`).
            guard let registered = registry.batches[batchID] else { continue }
            waiting += max(0, registered.unfinishedCount - run.items.count) * registered.tasksPerItem
        }
        return dispatcher.queuedTaskCount + waiting
    }

    /// Takes one event, taken at `now` (`wallClockMilliseconds`: the wall clock then, for what is
    /// journaled), and returns what to carry out, in order.
    mutating func handle(
        _ event: CoreEvent, now: ContinuousClock.Instant, wallClockMilliseconds: UInt64
    ) -> [CoreEffect] {
        self.now = now
        self.wallClockMilliseconds = wallClockMilliseconds
        switch event {
        case .submit(let submit, let sender, let batchID): accept(submit, from: sender, batchID: batchID)
        case .cancel(let request, let peer): cancel(request, from: peer)
        case .retryBatch(let request, let peer): retry(request, from: peer)
        case .workerHello(let hello, let sender):
            log(.info, "worker joined", ["worker": hello.workerID, "slots": "\(hello.slots)", "host": hello.hostname])
            send(dispatcher.register(hello, peer: sender.identity, key: sender.key, now: now))
        case .heartbeat(let heartbeat, let peer):
            let (lost, out) = dispatcher.heartbeat(heartbeat, from: peer, now: now)
            if lost > 0 {
                log(
                    .warning, "assignments never reached their worker; their attempts count as lost",
                    ["worker": "\(peer)", "tasks": "\(lost)"])
            }
            send(out)
        case .workerGoodbye(let goodbye, let peer):
            log(.info, goodbye.draining ? "worker draining" : "worker left", ["worker": goodbye.workerID])
            send(dispatcher.workerLeft(peer, draining: goodbye.draining))
        case .taskGivenBack(let answer, let peer):
            send(dispatcher.givenBack(answer, from: peer, now: now))
        case .peerUnreachable(let peer):
            let (wasWorker, out) = dispatcher.workerUnreachable(peer)
            if wasWorker {
                log(
                    .warning, "worker unreachable (connection gone); its tasks' attempts are lost and retried",
                    ["worker": "\(peer)"])
            }
            send(out)
        case .results(let results, let peer):
            for result in results {
                let (current, out) = dispatcher.complete(result, from: peer, now: now)
                if let current {
                    taskTimeouts.finished(current.taskKey)
                    deliver(current, from: peer)
                }
                settleTimedOutTasks()
                send(out)
            }
        case .tick:
            for (batchID, seconds) in deadlines.expired(now: now) { cancelAtDeadline(batchID, seconds: seconds) }
            forget(registry.retireExpired(now: now))
        case .judgeSilence:
            let (dead, out) = dispatcher.expireWorkers(now: now)
            for worker in dead {
                log(.warning, "worker declared dead; its tasks' attempts are lost and retried", ["worker": worker])
            }
            send(out)
            enforceTaskTimeouts()
        case .timerFired(.retry(let key)):
            guard let owner = owners[key], var item = runs[owner.batchID]?.items[owner.itemIndex],
                item.currentKey == key, let request = item.retryDue()
            else { break }
            runs[owner.batchID]?.items[owner.itemIndex] = item
            enqueue(request, of: item, in: owner.batchID)
        case .restore(let recovered, let wallClock):
            restore(recovered, wallClockMilliseconds: wallClock)
        case .recorded(.acceptance(let batchID)):
            admit(batchID)
        case .notRecorded(.acceptance(let batchID), let reason):
            refuseUnrecorded(batchID, reason: reason)
        case .recorded(.retry(let batchID)):
            reopen(batchID)
        case .notRecorded(.retry(let batchID), let reason):
            refuseUnrecordedRetry(batchID, reason: reason)
        case .uploadData(let upload, let peer): receiveUpload(upload, from: peer)
        case .uploadsAttached(let batchID, let peer): attachUploads(batchID, client: peer)
        case .uploadSpooled(let item, let written): uploadSpooled(item, written: written)
        case .uploadLoaded(let item, let bytes, let crc): uploadLoaded(item, bytes: bytes, crc32c: crc)
        }
        settle()
        flushSends()
        defer { effects = [] }
        return effects
    }

    /// Delivers what the dispatcher decided on its own while handling the event: results of tasks whose
    /// input went with its worker (their producer runs again, `Lineage`), attempts lost with their workers
    /// (retried as their batches allow), results of chained tasks held until their task was asked for.
    private mutating func settle() {
        while true {
            let lostInputs = dispatcher.takeLostInputs()
            let losses = dispatcher.takeWorkerLosses()
            let chained = dispatcher.takeChainedResults()
            // Chained tilt-shifts adopted by their download's worker: their clocks start now.
            for (assignment, worker) in dispatcher.takeAdoptedFollowOns() {
                taskTimeouts.started(assignment, on: worker, now: now)
            }
            if lostInputs.isEmpty && losses.isEmpty && chained.isEmpty { return }
            for result in lostInputs { deliver(result) }
            for loss in losses { deliver(loss.result, workerID: loss.workerID, lossReason: loss.reason) }
            for (result, worker) in chained {
                taskTimeouts.finished(result.taskKey)
                deliver(result, from: worker)
            }
        }
    }

    // MARK: Effects

    mutating func send(_ out: [Outbound]) {
        guard !out.isEmpty else { return }
        taskTimeouts.sent(out, now: now)  // the assignments' clocks start as they go out
        sending += out
    }

    /// Ends the messages gathered so far with an effect, so that what comes next is carried out after them.
    private mutating func flushSends() {
        guard !sending.isEmpty else { return }
        effects.append(.send(sending))
        sending = []
    }

    mutating func append(_ effect: CoreEffect) {
        flushSends()
        effects.append(effect)
    }

    mutating func journal(_ entry: JournalEntry) { append(.journal(entry)) }

    mutating func log(_ level: Logger.Level, _ message: String, _ metadata: [String: String] = [:]) {
        append(.log(level, message, metadata: metadata))
    }

    mutating func setTimer(after wait: Duration, _ timer: CoreTimer) { append(.setTimer(after: wait, timer)) }

    var eventInstant: ContinuousClock.Instant { now }
    var eventWallClock: UInt64 { wallClockMilliseconds }
    mutating func randomFraction() -> Double { random.nextFraction() }
}

/// A small deterministic generator for the random part of retry waits: the core stays a value that
/// replays the same way from the same seed.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A fraction in 0..<1.
    mutating func nextFraction() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
