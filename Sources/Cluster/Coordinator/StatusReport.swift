import Fetching
import Messaging
import Wire

/// The coordinator's answer to `StatusRequest`: its workers, its queue, and its batches (one with its
/// items, when asked), read from the dispatcher and the batch registry.
struct StatusReport {
    let dispatcher: Dispatcher
    let registry: BatchRegistry
    /// Tasks accepted and not started (`Coordinator.queuedTaskCount`).
    let queuedTasks: Int
    /// Messages the coordinator dropped (besides the stale results the dispatcher counts).
    let droppedMessages: UInt64
    let now: ContinuousClock.Instant
    /// The batches a list shows (a client sees its own), and who owns each.
    var scope: BatchScope = .all
    var owners: [String: CurvePublicKey] = [:]
    /// The running part of batches, for the failed attempts of unfinished items.
    var runs: [String: BatchRun] = [:]
    /// A coordinator of a pair: its role, its peer's, the backup's lag (`nil` alone).
    var pair: WirePairStatus?

    /// The report of `coordinator` as it stands, its lists of batches limited to `scope`.
    init(coordinator: isolated Coordinator, now: ContinuousClock.Instant, scope: BatchScope = .all) {
        self.init(
            dispatcher: coordinator.dispatcher, registry: coordinator.registry,
            queuedTasks: coordinator.queuedTaskCount,
            droppedMessages: coordinator.droppedMessages, now: now)
        self.scope = scope
        self.owners = coordinator.access.owners
        self.runs = coordinator.core.runs
        self.pair = coordinator.pairStatus(now: now)
    }

    init(
        dispatcher: Dispatcher, registry: BatchRegistry, queuedTasks: Int, droppedMessages: UInt64,
        now: ContinuousClock.Instant
    ) {
        self.dispatcher = dispatcher
        self.registry = registry
        self.queuedTasks = queuedTasks
        self.droppedMessages = droppedMessages
        self.now = now
    }

    /// The answer to `request`: its `StatusReply`, or, when it names a batch that was retired, a
    /// `Refusal` (`UNKNOWN_BATCH`) that says when and by which retention rule.
    func answer(to request: StatusRequest) -> Message {
        if !request.batchID.isEmpty, registry.batches[request.batchID] == nil,
            registry.retiredBatches[request.batchID] != nil
        {
            return .refusal(
                registry.unknownBatch(request.batchID, requestID: request.requestID, now: now, otherwise: ""))
        }
        return .statusReply(reply(to: request))
    }

    /// The reply to `request`: every batch of the scope without items, or the batch it names with its
    /// items (none when the coordinator does not know it).
    func reply(to request: StatusRequest) -> StatusReply {
        let workerStatuses = dispatcher.workers.values
            .sorted { $0.workerID < $1.workerID }
            .map { worker in
                WorkerStatus(
                    workerID: worker.workerID, hostname: worker.hostname, slots: UInt32(worker.slots),
                    running: UInt32(worker.running.count), completed: worker.completed, failed: worker.failed,
                    lastSeenMsAgo: Self.milliseconds(now - worker.lastSeen), droppedMessages: worker.droppedMessages,
                    version: worker.version)
            }
        let selected: [RegisteredBatch]
        if request.batchID.isEmpty {
            selected = registry.batches.values.filter { scope.includes(owners[$0.batchID]) }.sorted {
                $0.batchID < $1.batchID
            }
        } else {
            selected = registry.batches[request.batchID].map { [$0] } ?? []
        }
        let batchStatuses = selected.map { batch in
            var status = BatchStatus(
                batchID: batch.batchID, itemCount: UInt32(batch.items.count), succeeded: batch.succeeded,
                failed: batch.failed, cancelled: batch.cancelled,
                items: request.batchID.isEmpty
                    ? []
                    : batch.items.indices.map { index in
                        let (state, error) = self.state(of: index, in: batch)
                        let failed = self.failedAttempts(of: index, in: batch)
                        // Shown to people (status, the dashboard, its owner too): credentials in a source are masked.
                        return ItemStatus(
                            itemIndex: UInt32(index), source: SourceRedaction.redact(batch.items[index].source),
                            state: state,
                            error: SourceRedaction.redactURLs(in: error),
                            warnings: batch.warnings(of: index), location: batch.location(of: index),
                            attempts: Self.attempts(state: state, failed: failed),
                            failedAttempts: failed.map { attempt in
                                var shown = attempt
                                shown.error = SourceRedaction.redactURLs(in: attempt.error)
                                return shown
                            })
                    })
            status.priority = batch.priority
            status.idempotencyKey = batch.idempotencyKey
            return status
        }
        var reply = StatusReply(
            requestID: request.requestID, workers: workerStatuses, queuedTasks: UInt32(clamping: queuedTasks),
            runningTasks: UInt32(dispatcher.runningTaskCount), completedTasks: dispatcher.completedTasks,
            failedTasks: dispatcher.failedTasks, batches: batchStatuses,
            droppedMessages: droppedMessages + dispatcher.staleResults,
            tasksPerSecond: dispatcher.tasksPerSecond(now: now), coordinatorID: dispatcher.coordinatorID)
        if request.batchID.isEmpty {
            reply.clients = registry.clientUsage.lazy.filter { scope.includes($0.key.publicKey) }
                .map {
                    ClientStatus(
                        client: $0.key.description, queuedItems: UInt32(clamping: $0.value.queuedItems),
                        batches: UInt32(clamping: $0.value.batches))
                }
                .sorted { $0.client < $1.client }
        }
        reply.maxQueuedItemsPerClient = UInt32(clamping: registry.limits.maxQueuedItemsPerClient)
        reply.maxBatchesPerClient = UInt32(clamping: registry.limits.maxBatchesPerClient)
        reply.pair = pair
        return reply
    }

    /// An item's state as `shiftwork status BATCH` shows it: `running` while a worker holds one of its
    /// tasks, `queued` before, then its outcome; and why it did not succeed.
    func state(of index: Int, in batch: RegisteredBatch) -> (state: String, error: String) {
        switch batch.items[index].state {
        case .succeeded:
            return ("succeeded", "")
        case .failed:
            return ("failed", batch.failure(of: index)?.message ?? "")
        case .cancelled:
            return ("cancelled", batch.failure(of: index)?.message ?? "")
        case .unfinished, .cancelling:
            for key in batch.taskKeys(of: index) {
                switch dispatcher.state(of: key) {
                case .running?, .cancelling?: return ("running", "")
                case .queued?, nil: continue
                }
            }
            return ("queued", "")
        }
    }

    /// The failed attempts of an item's tasks, oldest first: kept by the registry once it finished, read
    /// from its running tasks while it runs.
    func failedAttempts(of index: Int, in batch: RegisteredBatch) -> [AttemptStatus] {
        let earlier = batch.failedAttempts(of: index)  // a retried item's earlier runs; all of a finished one's
        if batch.items[index].state.isFinished { return earlier }
        guard let run = runs[batch.batchID] else { return earlier }
        return earlier + (run.items[index]?.failedAttempts ?? run.restoredAttempts[index] ?? [])
    }

    /// Attempts made at an item: 1 + the retries of its tasks; 0 for an item still queued that never failed.
    static func attempts(state: String, failed: [AttemptStatus]) -> UInt32 {
        if state == "queued" && failed.isEmpty { return 0 }
        return UInt32(1 + failed.filter(\.retried).count)
    }

    static func milliseconds(_ duration: Duration) -> UInt64 {
        let parts = duration.components
        return UInt64(max(0, parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000))
    }
}
