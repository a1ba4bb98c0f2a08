/// One record of the coordinator's journal (`proto/shiftwork/v1/journal.proto`): what a restarted
/// coordinator needs to know to carry on where it stopped. Encode and decode with ``JournalCodec``.
public enum JournalRecord: Sendable, Equatable {
    /// A coordinator process started on this journal.
    case started(coordinatorID: String, incarnation: UInt32, unixMilliseconds: UInt64)
    /// A batch was accepted from `client` (its ZeroMQ identity). `ownerKey` is the submitter's CurveZMQ
    /// public key in Z85, the batch's owner (empty without CurveZMQ).
    case batchAccepted(
        batchID: String, client: [UInt8], submit: SubmitBatch, unixMilliseconds: UInt64, ownerKey: String = "")
    /// An item reached its final outcome. An output's bytes are not in the journal (its `data` is
    /// empty): they are in the coordinator's results directory.
    case itemFinished(ItemFinished)
    /// A manifest item expanded into more items.
    case itemsAdded(ItemsAdded)
    /// A client cancelled a batch or some of its items.
    case batchCancelled(CancelBatch)
    /// A client re-ran items of a finished batch (``RetryBatch``): their earlier outcomes are void, and they
    /// run (again, after a restart) until they finish anew.
    case batchRetried(batchID: String, itemIndexes: [UInt32], unixMilliseconds: UInt64)
    /// An attempt at one of an item's tasks failed (retried or not): replayed for status and for the
    /// retries an unfinished item has left.
    case attemptFailed(batchID: String, itemIndex: UInt32, attempt: AttemptStatus)
    /// A finished batch was forgotten, and its results removed.
    case batchRetired(batchID: String)
    /// A pair of coordinators (`--ha`): the journal's position where this record stands (written after a
    /// compaction, which keeps no count of the records it dropped). Not counted itself.
    case pairPosition(term: UInt64, records: UInt64)
    /// A takeover started a new term: the position becomes `(term, records + 1)`. Replicated to the peer.
    case pairTerm(UInt64)
    /// What this coordinator of a pair last was (`PairHistory`'s raw value). Never replicated, not counted.
    case pairHistory(String)
}
