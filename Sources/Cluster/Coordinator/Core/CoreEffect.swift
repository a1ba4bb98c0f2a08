import Logging
import Wire

/// What the coordinator's actor carries out for `CoordinatorCore`, in the order given: a journal record
/// always comes before the messages it makes durable (the actor writes and flushes it before it sends).
enum CoreEffect {
    /// Write this record to the journal (with a data directory; none without).
    case journal(JournalEntry)
    /// Write this record to the journal, synced, then hand the core `CoreEvent.recorded(decision)`; if it
    /// cannot be written, `CoreEvent.notRecorded(decision, reason:)` instead, and the client is refused:
    /// nothing a client is told was accepted (a batch, a retry) may be lost by a restart. Without a data
    /// directory it counts as written.
    case recordDurably(JournalEntry, awaiting: DurableDecision)
    /// Send these messages (batchable ones to one peer grouped, `Outbound.coalesced`).
    case send([Outbound])
    /// Fire `CoreTimer` after this long (as `CoreEvent.timerFired`).
    case setTimer(after: Duration, CoreTimer)
    /// The core let go of a batch's running part (finished) or of the whole batch (retired): the memory
    /// it held can go back to the system (`AllocatorTrim`).
    case released(batchID: String)
    /// A log line; `metadata` values may come from the network and are escaped by the actor.
    case log(Logger.Level, String, metadata: [String: String])
    /// Uploaded files: spool I/O, counting (`UploadIO`).
    case upload(UploadIO)
}

/// A decision the core holds back until the journal has its record (`CoreEffect.recordDurably`).
enum DurableDecision: Hashable {
    /// A submitted batch (`PendingAcceptance`).
    case acceptance(batchID: String)
    /// A retry of a finished batch's items (`PendingRetry`).
    case retry(batchID: String)
}

/// A record for the coordinator's journal, as `Journal`'s `record…` methods take it.
enum JournalEntry: Equatable {
    case accepted(batchID: String, client: [UInt8], submit: SubmitBatch, ownerKey: String)
    case finished(ItemFinished)
    case itemsAdded(ItemsAdded)
    case attemptFailed(batchID: String, itemIndex: UInt32, attempt: AttemptStatus)
    case cancelled(CancelBatch)
    case retried(batchID: String, itemIndexes: [UInt32])
    case retired(batchID: String)
}

extension Journal {
    /// Writes `entry` (buffered, as every `record…`; `flush` makes it durable).
    func record(_ entry: JournalEntry) throws {
        switch entry {
        case .accepted(let batchID, let client, let submit, let ownerKey):
            try recordAccepted(batchID: batchID, client: client, submit: submit, ownerKey: ownerKey)
        case .finished(let item): try recordFinished(item)
        case .itemsAdded(let added): try recordItemsAdded(added)
        case .attemptFailed(let batchID, let itemIndex, let attempt):
            try recordAttemptFailed(batchID: batchID, itemIndex: itemIndex, attempt: attempt)
        case .cancelled(let cancel): try recordCancelled(cancel)
        case .retried(let batchID, let itemIndexes): try recordRetried(batchID: batchID, itemIndexes: itemIndexes)
        case .retired(let batchID): try recordRetired(batchID: batchID)
        }
    }
}
