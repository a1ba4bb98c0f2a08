import Wire

/// A batch as the journal remembers it: enough to run what is left of it after a restart.
struct RecoveredBatch: Sendable {
    let batchID: String
    /// The ZeroMQ identity of the client that submitted it.
    let client: [UInt8]
    let submit: SubmitBatch
    /// The submitter's CurveZMQ public key in Z85, the batch's owner; empty without CurveZMQ.
    var ownerKey = ""
    /// When it was accepted (milliseconds since 1970).
    let acceptedUnixMilliseconds: UInt64
    /// Items that reached their final outcome, by index. Outputs carry no bytes here (they are in the
    /// results directory).
    var finished: [Int: ItemFinished] = [:]
    /// Cancellations requested and perhaps not yet carried out, in order.
    var cancellations: [CancelBatch] = []
    /// Expansions of manifest items, in order: their items follow the submitted ones.
    var expansions: [ItemsAdded] = []
    /// When its items were last re-run (`RetryBatch`, milliseconds since 1970), if they were since the
    /// journal was last compacted: its deadline counts from then.
    var retriedUnixMilliseconds: UInt64?
    /// Failed attempts at items' tasks, by item index, oldest first.
    var failedAttempts: [Int: [AttemptStatus]] = [:]

    /// The submitted items, then those manifests added.
    var allItems: [BatchItem] { submit.items + expansions.flatMap(\.items) }

    /// Whether every item has its outcome.
    var isComplete: Bool { finished.count >= submit.items.count + expansions.reduce(0) { $0 + $1.items.count } }

    /// Items of the (finished) batch run again (`RetryBatch`): their outcomes are void, so they are planned
    /// again. Cancellations recorded before concerned finished items only (a batch is retried only once
    /// complete), so they no longer apply; the compacted journal needs no record of the retry.
    mutating func rerun(_ itemIndexes: [UInt32], at unixMilliseconds: UInt64) {
        for index in itemIndexes { finished[Int(index)] = nil }
        retriedUnixMilliseconds = unixMilliseconds
        cancellations = []
    }

    /// The outcome a manifest item has once its expansion is recorded.
    static let expandedOutcome = TaskOutcome.output(TaskOutput(data: [], mediaType: ManifestList.mediaType))
}

/// What the journal held when the coordinator started.
struct RecoveredState: Sendable {
    /// This start's number (1 for the first start on a journal).
    var incarnation: UInt32 = 1
    /// Batches not yet retired, in the order they were accepted.
    var batches: [RecoveredBatch] = []
    /// Records that could not be decoded (or named an unknown batch) and were skipped.
    var skippedRecords = 0
    /// Bytes cut off the end of the file (a record torn by a crash).
    var discardedBytes = 0
    /// How far the journal goes, for a pair of coordinators (`JournalPosition.advanced(by:)`).
    var position = JournalPosition.empty
    /// What this coordinator of a pair last was (`JournalPairHistory`; `.none` without such a record).
    var history = PairHistory.none

    /// Applies the records of a journal, in order.
    init(replaying records: [[UInt8]], discardedBytes: Int = 0) {
        self.discardedBytes = discardedBytes
        var order: [String] = []
        var byID: [String: RecoveredBatch] = [:]
        var lastIncarnation: UInt32 = 0
        for bytes in records {
            guard let record = try? JournalCodec.decode(bytes) else {
                skippedRecords += 1
                continue
            }
            position = position.advanced(by: record)
            switch record {
            case .pairPosition, .pairTerm: break
            case .pairHistory(let text): history = PairHistory(rawValue: text) ?? history
            case .started(_, let incarnation, _):
                lastIncarnation = max(lastIncarnation, incarnation)
            case .batchAccepted(let batchID, let client, let submit, let accepted, let ownerKey):
                if byID[batchID] == nil { order.append(batchID) }
                byID[batchID] = RecoveredBatch(
                    batchID: batchID, client: client, submit: submit, ownerKey: ownerKey,
                    acceptedUnixMilliseconds: accepted)
            case .itemsAdded(let added):
                guard let batch = byID[added.batchID], Int(added.firstIndex) == batch.allItems.count,
                    Int(added.parentIndex) < batch.allItems.count
                else {
                    skippedRecords += 1
                    continue
                }
                byID[added.batchID]?.expansions.append(added)
                byID[added.batchID]?.finished[Int(added.parentIndex)] = ItemFinished(
                    batchID: added.batchID, itemIndex: added.parentIndex,
                    outputName: batch.allItems[Int(added.parentIndex)].outputName,
                    outcome: RecoveredBatch.expandedOutcome)
            case .itemFinished(let item):
                guard byID[item.batchID] != nil, Int(item.itemIndex) < byID[item.batchID]?.allItems.count ?? 0
                else {
                    skippedRecords += 1
                    continue
                }
                byID[item.batchID]?.finished[Int(item.itemIndex)] = item
            case .batchCancelled(let cancel):
                guard byID[cancel.batchID] != nil else {
                    skippedRecords += 1
                    continue
                }
                byID[cancel.batchID]?.cancellations.append(cancel)
            case .batchRetired(let batchID):
                byID[batchID] = nil
            case .batchRetried(let batchID, let itemIndexes, let unixMilliseconds):
                guard byID[batchID] != nil else {
                    skippedRecords += 1
                    continue
                }
                byID[batchID]?.rerun(itemIndexes, at: unixMilliseconds)
            case .attemptFailed(let batchID, let itemIndex, let attempt):
                // Written as attempts fail, perhaps just after their batch retired: those are let go.
                byID[batchID]?.failedAttempts[Int(itemIndex), default: []].append(attempt)
            }
        }
        incarnation = lastIncarnation + 1
        batches = order.compactMap { byID[$0] }
    }

    /// The records that rebuild this state (for compacting the journal), without the retired batches.
    var compactRecords: [JournalRecord] {
        var records: [JournalRecord] = []
        for batch in batches {
            records.append(
                .batchAccepted(
                    batchID: batch.batchID, client: batch.client, submit: batch.submit,
                    unixMilliseconds: batch.acceptedUnixMilliseconds, ownerKey: batch.ownerKey))
            records += batch.expansions.map { .itemsAdded($0) }
            for index in batch.failedAttempts.keys.sorted() {
                for attempt in batch.failedAttempts[index] ?? [] {
                    records.append(.attemptFailed(batchID: batch.batchID, itemIndex: UInt32(index), attempt: attempt))
                }
            }
            for index in batch.finished.keys.sorted() {
                if let item = batch.finished[index] { records.append(.itemFinished(item)) }
            }
            // Cancellations matter only for items still unfinished.
            if !batch.isComplete {
                records += batch.cancellations.map { .batchCancelled($0) }
            }
        }
        return records
    }
}
