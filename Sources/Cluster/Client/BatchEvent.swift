import Wire

/// What happens to a submitted batch, in order: accepted, then one `itemFinished` per item, then `finished`.
public enum BatchEvent: Sendable {
    /// The coordinator took the batch and gave it an ID.
    case accepted(batchID: String, itemCount: Int)
    /// Instead of `accepted`: the submission's idempotency key named a batch the coordinator had, and the
    /// client was attached to it (no second batch); its items finished so far follow, then the others.
    case attached(batchID: String, itemCount: Int)
    /// Instead of `accepted`, for a retry (`ClusterClient.retry`): the coordinator runs these items of the
    /// batch again (none: nothing to re-run, and the stream ends); only their results follow.
    case retrying(RetryAccepted)
    /// One item is done: its output image or its error.
    case itemFinished(ItemFinished)
    /// Several items of the batch are done, in order (they arrived in one message): each means what
    /// `itemFinished` would.
    case itemsFinished([ItemFinished])
    /// A manifest item's images joined the batch (before their own `itemFinished`).
    case itemsAdded(ItemsAdded)
    /// Every item is done.
    case finished(BatchFinished)
}
