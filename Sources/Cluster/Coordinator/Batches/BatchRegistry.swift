import Wire

/// The coordinator's batches as its clients see them, free of I/O and of the operations engine: which
/// batches exist, their items and how each finished, who is told of them, and how many items each client
/// still has unfinished. Each event goes in; the messages to send (and what else the coordinator must
/// do: tasks to withdraw, batches to forget) come out. `Dispatcher` is its counterpart for tasks and
/// workers; the `Coordinator` actor feeds both.
///
/// Rules:
/// - A submission is refused (with a `RefusalCode`) when it is empty, of a kind that is not supported, or
///   over a limit: items per batch, unfinished items per client.
/// - An item finishes once. Its `ItemFinished` goes to the batch's audience: the submitting client and
///   whoever attached with `FetchResults` and has caught up. `BatchFinished` follows the last item.
/// - A cancel marks the unfinished items it names cancelling, answers `CancelAccepted` with how many
///   they are, and names their tasks for the coordinator to withdraw; they finish when the core ends them.
/// - A retry (`RetryBatch`) re-runs the failed and cancelled items of a finished batch (or those it names)
///   as new attempts of the same batch: they are unfinished again, with new task keys, the batch is
///   running again, and the client that asked joins its audience. It is refused for a batch with items
///   still running, for a name that is no item of the batch, and for an item that succeeded (its output is
///   kept). Nothing to re-run (every item succeeded) is answered with no items, not refused.
/// - A finished batch is kept for status and `FetchResults` as its `BatchRetention` says (how many
///   finished batches, for how long); then it is retired: its items and outcomes are let go, and only a
///   `RetiredBatch` stays, so that status, `FetchResults` and cancels naming it are refused with why.
struct BatchRegistry {
    /// Limits on what one submission and one client may ask.
    struct Limits {
        var maxBatchItems: Int
        var maxPendingItemsPerClient: Int
        /// Per client (`ClientIdentity`: its key, or its connection): unfinished items, and batches kept.
        var maxQueuedItemsPerClient = ClusterDefaults.maxQueuedItemsPerClient
        var maxBatchesPerClient = ClusterDefaults.maxBatchesPerClient
    }

    /// What carrying out a cancel takes, besides the answer.
    struct Cancellation {
        /// The answer: `CancelAccepted`, a `Refusal`, or nothing (no request ID, or replayed from the journal).
        var out: [Outbound] = []
        /// The batch exists: the cancel is carried out (and journaled).
        var isAccepted = false
        /// Every item was asked for: every unfinished item of the batch is ended.
        var isWholeBatch = false
        /// The items now cancelling: the core ends each once.
        var items: [Int] = []
        /// Their tasks, to withdraw from the dispatcher (dropped from the queue, or cancelled on their worker).
        var taskKeys: [TaskKey] = []
    }

    /// What the end of one item brings about.
    struct ItemEnd {
        /// The item as its clients are told (with its output's bytes), for the journal.
        let finished: ItemFinished
        var out: [Outbound]
        /// The batch is complete: the core lets go of its running part.
        var batchFinished: BatchFinished?
        /// Batches retired now: journal their retirement (their results are deleted).
        var retired: [String] = []
    }

    /// A client being sent a batch's finished items again (`FetchResults`), and how far it has got.
    struct CatchUp {
        let batchID: String
        let peer: PeerIdentity
        /// Items it has been told of (`BatchAccepted.item_count`, then `ItemsAdded`).
        var announced: Int
        /// Finished items already sent to it, by index.
        var sent: [Bool]
        /// The batch's summary when last seen, for the `BatchFinished` of a batch retired meanwhile.
        var summary: BatchFinished
    }

    let limits: Limits
    /// How many finished batches are kept, and for how long.
    let retention: BatchRetention
    /// Finished outputs are kept (in the results directory) and can be sent again: the coordinator has a journal.
    let keepsResults: Bool
    /// Written only here and in `BatchRegistry+Retrying`.
    var batches: [String: RegisteredBatch] = [:]
    /// Clients attached to a batch besides the one that submitted it (`FetchResults`).
    var subscribers: [String: Set<PeerIdentity>] = [:]
    /// Clients still being sent a batch's finished items; they join its audience once they have caught up.
    /// Written only in `BatchRegistry+Attaching`.
    var replaying: [String: Set<PeerIdentity>] = [:]
    /// The batches submitted with an idempotency key, by scope and key; as long as the batch is kept.
    private var batchesByKey: [IdempotencyIndex: String] = [:]
    /// Unfinished items per client, for `maxPendingItemsPerClient`.
    var pendingItems: [PeerIdentity: Int] = [:]
    /// Items queued and batches kept per client (key, or connection without CurveZMQ), for
    /// `maxQueuedItemsPerClient` and `maxBatchesPerClient`; a client with nothing kept has no entry.
    private(set) var clientUsage: [ClientIdentity: ClientUsage] = [:]
    /// Finished batches still kept, oldest first, with when they finished.
    var finishedBatches: [(batchID: String, finishedAt: ContinuousClock.Instant)] = []
    /// What is remembered of retired batches (at most `BatchRetention.retiredBatchesRemembered`), and
    /// their order, oldest first.
    private(set) var retiredBatches: [String: RetiredBatch] = [:]
    private var retiredOrder: [String] = []
    private(set) var batchesAccepted: UInt64 = 0
    /// The next task key to hand out (`TaskAssignment.taskKey`): unique for this coordinator, never 0.
    private var nextTaskKey: TaskKey = 1

    init(limits: Limits, keepsResults: Bool, retention: BatchRetention = BatchRetention()) {
        self.limits = limits
        self.keepsResults = keepsResults
        self.retention = retention
    }

    /// Batches with unfinished items.
    var runningBatchCount: Int { batches.count - finishedBatches.count }

    // MARK: Submitting

    /// Why `submit` cannot be accepted from `client` (the client `owner` for the per-client limits; by
    /// default its connection), or `nil` when it can.
    func refusal(of submit: SubmitBatch, from client: PeerIdentity, owner: ClientIdentity? = nil) -> Refusal? {
        func refuse(_ code: RefusalCode, _ reason: String) -> Refusal {
            Refusal(requestID: submit.requestID, code: code, reason: reason)
        }
        guard submit.kind == .unspecified || submit.kind == .noop else {
            return refuse(.invalidRequest, "batches of \(submit.kind) tasks are not supported: submit images")
        }
        if submit.items.isEmpty {
            return refuse(.invalidRequest, "the batch has no items: give at least one image URL or path")
        }
        if let problem = BatchPriority.problem(submit.priority) {
            return refuse(.invalidRequest, problem)
        }
        if !submit.idempotencyKey.isEmpty, let problem = IdempotencyKey.problem(submit.idempotencyKey) {
            return refuse(.invalidRequest, problem)
        }
        if let problem = TaskRetrySchedule.problem(retries: submit.retries)
            ?? BatchDeadlines.problem(seconds: submit.deadlineSeconds)
        {
            return refuse(.invalidRequest, problem)
        }
        if let (index, problem) = submit.items.lazy.enumerated()
            .compactMap({ item in PeerInputRules.sourceProblem(item.element.source).map { (item.offset, $0) } }).first
        {
            return refuse(.invalidRequest, "item \(index): \(problem)")
        }
        if submit.items.count > limits.maxBatchItems {
            return refuse(
                .limit,
                "the batch has \(submit.items.count) items, more than this coordinator accepts in one "
                    + "batch (\(limits.maxBatchItems), its --max-batch-items): split it into smaller batches")
        }
        let pending = pendingItems[client, default: 0]
        if pending + submit.items.count > limits.maxPendingItemsPerClient {
            return refuse(
                .limit,
                "this client already has \(pending) unfinished items and the batch would add "
                    + "\(submit.items.count), more than this coordinator allows a client (\(limits.maxPendingItemsPerClient), "
                    + "its --max-pending-items-per-client): wait for earlier batches to finish, or submit fewer items")
        }
        return ClientUsage.refusal(
            of: submit.items.count, addingBatch: true,
            usage: clientUsage[owner ?? ClientIdentity(peer: client, key: nil)] ?? ClientUsage(),
            limits: limits
        ).map { refuse(.limit, $0) }
    }

    /// The batch `submit` (or, after a restart, `recovered`) describes, its items' task keys handed out;
    /// not registered yet (see `register`). Items `recovered` holds an outcome for are finished already.
    mutating func plan(
        batchID: String, client: PeerIdentity, submit: SubmitBatch,
        recovered: RecoveredBatch? = nil, idempotencyScope: String = "", owner: ClientIdentity? = nil
    ) -> RegisteredBatch {
        var batch = RegisteredBatch(
            batchID: batchID, client: client, clientAcceptsBatches: submit.acceptsBatches,
            tasksPerItem: submit.kind == .noop ? 1 : 2)
        if let owner { batch.owner = owner }
        batch.priority = submit.priority
        batch.idempotencyKey = submit.idempotencyKey
        batch.idempotencyScope = idempotencyScope
        var parents: [Int: Int] = [:]
        for expansion in recovered?.expansions ?? [] {
            for offset in expansion.items.indices {
                parents[Int(expansion.firstIndex) + offset] = Int(expansion.parentIndex)
            }
        }
        for (index, item) in (recovered?.allItems ?? submit.items).enumerated() {
            let parent = parents[index]
            let depth = parent.map { batch.items.indices.contains($0) ? batch.items[$0].depth + 1 : 1 } ?? 0
            let recorded = recovered?.finished[index]?.outcome
            batch.append(
                source: item.source, outputName: item.outputName.isEmpty ? "item-\(index)" : item.outputName,
                parent: parent.map(Int32.init), depth: depth,
                firstTaskKey: recorded == nil ? takeTaskKeys(batch.tasksPerItem) : 0, recorded: recorded)
            // A finished item's attempts are kept for status; an unfinished item's go to its operations.
            if recorded != nil, let attempts = recovered?.failedAttempts[index], !attempts.isEmpty {
                batch.noteFailedAttempts(attempts, of: index)
            }
        }
        return batch
    }

    /// Registers a planned batch. With `requestID` (a submission, not a restart), the client is told it
    /// is accepted. Returns the answer, and the batches retired if it is complete already (restored).
    mutating func register(
        _ batch: RegisteredBatch, answering requestID: String?, coordinatorID: String,
        now: ContinuousClock.Instant = .now
    ) -> (out: [Outbound], retired: [String]) {
        batches[batch.batchID] = batch
        if !batch.idempotencyKey.isEmpty {
            batchesByKey[IdempotencyIndex(scope: batch.idempotencyScope, key: batch.idempotencyKey)] = batch.batchID
        }
        pendingItems[batch.client, default: 0] += batch.unfinishedCount
        clientUsage[batch.owner, default: ClientUsage()].batches += 1
        clientUsage[batch.owner, default: ClientUsage()].queuedItems += batch.unfinishedCount
        var out: [Outbound] = []
        if let requestID {
            batchesAccepted += 1
            out.append(
                Outbound(
                    peer: batch.client,
                    message: .batchAccepted(
                        BatchAccepted(
                            requestID: requestID, batchID: batch.batchID, itemCount: UInt32(batch.items.count),
                            coordinatorID: coordinatorID))))
        }
        return (out, batch.isComplete ? keepFinished(batch.batchID, now: now) : [])
    }

    mutating func takeTaskKeys(_ count: Int) -> TaskKey {
        defer { nextTaskKey += TaskKey(count) }
        return nextTaskKey
    }

    /// The batch kept under an idempotency key in `scope` (`ClientIdentity.idempotencyScope`), if any.
    func batchID(forKey key: String, scope: String) -> String? {
        key.isEmpty ? nil : batchesByKey[IdempotencyIndex(scope: scope, key: key)]
    }

    // MARK: Finishing items

    /// Keeps the failed attempts of an item's tasks (oldest first) for status; called as the item finishes.
    mutating func noteFailedAttempts(_ attempts: [AttemptStatus], item index: Int, of batchID: String) {
        guard !attempts.isEmpty else { return }
        batches[batchID]?.noteFailedAttempts(attempts, of: index)
    }

    /// An item's operations ended with `outcome`; a manifest item's `added` items are announced first.
    /// Returns `nil` when the item had finished already or is unknown.
    /// `now` (read only when the batch completes, if not given) dates a completed batch for the retention.
    mutating func finish(
        item index: Int, of batchID: String, outcome: TaskOutcome, added: ItemsAdded? = nil,
        now: ContinuousClock.Instant? = nil
    ) -> ItemEnd? {
        guard batches[batchID]?.finish(index, outcome: outcome, keepingOutput: keepsResults) == true,
            let batch = batches[batchID]
        else { return nil }
        reducePending(of: batch.client, by: 1)
        changeUsage(of: batch.owner, queuedItems: -1)
        let finished = ItemFinished(
            batchID: batchID, itemIndex: UInt32(index), outputName: batch.items[index].outputName,
            outcome: outcome)
        var end = ItemEnd(finished: finished, out: [])
        if batch.isComplete { end.batchFinished = batch.summary }
        // To each of its audience, in order: the items a manifest added, the item, the batch's summary. (Built
        // in place: one array per item, not a list of messages and one of peers besides.)
        func tell(_ peer: PeerIdentity) {
            if let added { end.out.append(Outbound(peer: peer, message: .itemsAdded(added))) }
            end.out.append(
                Outbound(
                    peer: peer, message: .itemFinished(finished),
                    batchable: peer == batch.client && batch.clientAcceptsBatches))
            if let summary = end.batchFinished {
                end.out.append(Outbound(peer: peer, message: .batchFinished(summary)))
            }
        }
        if subscribers.isEmpty && replaying.isEmpty {
            tell(batch.client)  // nobody attached: the common case
        } else {
            for peer in audience(of: batch) { tell(peer) }
        }
        if batch.isComplete { end.retired = keepFinished(batchID, now: now ?? .now) }  // after its audience was told
        return end
    }

    /// Adds to (or takes from) a client's usage; a client left with nothing loses its entry.
    mutating func changeUsage(of owner: ClientIdentity, queuedItems: Int = 0, batches: Int = 0) {
        var usage = clientUsage[owner] ?? ClientUsage()
        usage.queuedItems = max(0, usage.queuedItems + queuedItems)
        usage.batches = max(0, usage.batches + batches)
        clientUsage[owner] = usage.isEmpty ? nil : usage
    }

    mutating func reducePending(of client: PeerIdentity, by count: Int) {
        guard let remaining = pendingItems[client] else { return }
        pendingItems[client] = remaining > count ? remaining - count : nil
    }

    /// The clients told of a batch's items: its submitter and whoever attached since, except those still
    /// being sent the items finished before they attached. (`finish` tells the submitter alone, without
    /// asking, while nobody has attached to any batch.)
    private func audience(of batch: RegisteredBatch) -> [PeerIdentity] {
        let catchingUp = replaying[batch.batchID] ?? []
        var peers = catchingUp.contains(batch.client) ? [] : [batch.client]
        for peer in subscribers[batch.batchID] ?? [] where peer != batch.client && !catchingUp.contains(peer) {
            peers.append(peer)
        }
        return peers
    }

    // MARK: Retention

    /// Keeps a batch that just finished, as the retention allows (only what status and `FetchResults`
    /// need); returns the batches retired now.
    private mutating func keepFinished(_ batchID: String, now: ContinuousClock.Instant) -> [String] {
        batches[batchID]?.releaseRunningState()
        finishedBatches.append((batchID, now))
        var retired = retireExpired(now: now)
        while finishedBatches.count > retention.maxFinishedBatches {
            let oldest = finishedBatches.removeFirst()
            retire(oldest.batchID, by: .count(retention.maxFinishedBatches), now: now)
            retired.append(oldest.batchID)
        }
        return retired
    }

    /// Retires the finished batches older than the retention's age; returns them. The coordinator calls
    /// it from its timer; finishing a batch does too.
    mutating func retireExpired(now: ContinuousClock.Instant) -> [String] {
        var retired: [String] = []
        while let oldest = finishedBatches.first, now - oldest.finishedAt >= retention.maxFinishedAge {
            finishedBatches.removeFirst()
            retire(oldest.batchID, by: .age(retention.maxFinishedAge), now: now)
            retired.append(oldest.batchID)
        }
        return retired
    }

    /// Lets a finished batch go, and remembers what became of it.
    private mutating func retire(_ batchID: String, by rule: BatchRetention.Rule, now: ContinuousClock.Instant) {
        guard let batch = batches.removeValue(forKey: batchID) else { return }
        changeUsage(of: batch.owner, queuedItems: -batch.unfinishedCount, batches: -1)
        if !batch.idempotencyKey.isEmpty {
            batchesByKey[IdempotencyIndex(scope: batch.idempotencyScope, key: batch.idempotencyKey)] = nil
        }
        subscribers[batchID] = nil
        retiredBatches[batchID] = RetiredBatch(
            summary: batch.summary, itemCount: batch.items.count, rule: rule, retiredAt: now)
        retiredOrder.append(batchID)
        if retiredOrder.count > BatchRetention.retiredBatchesRemembered {
            retiredBatches[retiredOrder.removeFirst()] = nil
        }
    }

    /// The refusal of a request (`requestID`) naming `batchID`, which this coordinator does not hold:
    /// why (it was retired, and by which rule), or that it never knew it.
    func unknownBatch(
        _ batchID: String, requestID: String, now: ContinuousClock.Instant,
        otherwise reason: String
    ) -> Refusal {
        Refusal(
            requestID: requestID, code: .unknownBatch,
            reason: retiredBatches[batchID]?.refusalReason(now: now) ?? reason)
    }

    // MARK: Cancelling

    /// A client (or, with `peer` `nil`, the journal being replayed) cancels a batch or some of its items.
    mutating func cancel(
        _ request: CancelBatch, from peer: PeerIdentity?, now: ContinuousClock.Instant = .now
    ) -> Cancellation {
        var result = Cancellation()
        guard var batch = batches[request.batchID] else {
            if let peer {
                result.out = [
                    Outbound(
                        peer: peer,
                        message: .refusal(
                            unknownBatch(
                                request.batchID, requestID: request.requestID, now: now,
                                otherwise:
                                    "no batch \(request.batchID): `shiftwork status` lists the batches the coordinator knows"
                            )))
                ]
            }
            return result
        }
        result.isAccepted = true
        result.isWholeBatch = request.itemIndexes.isEmpty
        let selected = result.isWholeBatch ? Array(batch.items.indices) : request.itemIndexes.map { Int($0) }
        batches[request.batchID] = nil  // no copy while it changes
        for index in selected where batch.markCancelling(index) {
            result.items.append(index)
            result.taskKeys += batch.taskKeys(of: index)
        }
        batches[request.batchID] = batch
        if let peer, !request.requestID.isEmpty {
            result.out = [
                Outbound(
                    peer: peer,
                    message: .cancelAccepted(
                        CancelAccepted(
                            requestID: request.requestID, batchID: request.batchID,
                            cancelledItems: UInt32(result.items.count))))
            ]
        }
        return result
    }
}
