// Re-running what failed: `shiftwork retry BATCH` → RetryBatch → RetryAccepted, then ItemFinished as for SubmitBatch.

/// Sent by a client to the coordinator to re-run the failed and cancelled items of a finished batch (or
/// the items it names) as new attempts of the same batch; the batch's succeeded items keep their outputs.
/// The coordinator answers with ``RetryAccepted`` or a ``Refusal`` carrying `requestID`; the re-run items'
/// ``ItemFinished`` and then ``BatchFinished`` follow, as for a ``SubmitBatch``.
public struct RetryBatch: Sendable, Equatable {
    /// The client's correlation id, echoed in ``RetryAccepted`` or ``Refusal``.
    public var requestID: String
    /// The batch.
    public var batchID: String
    /// The items to re-run, each by its output name, its source, or its index in decimal; empty: every
    /// failed or cancelled item.
    public var items: [String]
    /// The client takes several finished items in one message (``ItemFinishedBatch``).
    public var acceptsBatches: Bool

    /// Creates a retry request.
    public init(requestID: String, batchID: String, items: [String] = [], acceptsBatches: Bool = false) {
        self.requestID = requestID
        self.batchID = batchID
        self.items = items
        self.acceptsBatches = acceptsBatches
    }
}

/// Sent by the coordinator to a client in answer to a ``RetryBatch``: the items in `itemIndexes` run again
/// (the retry is journaled). Empty `itemIndexes`: there was nothing to re-run (every item had succeeded),
/// and no ``BatchFinished`` follows.
public struct RetryAccepted: Sendable, Equatable {
    /// The client's correlation id, from ``RetryBatch``.
    public var requestID: String
    /// The batch.
    public var batchID: String
    /// The items that run again, in index order.
    public var itemIndexes: [UInt32]
    /// How many items the batch has.
    public var itemCount: UInt32
    /// The coordinator instance, as in ``BatchAccepted``: a client that sees it change re-attaches.
    public var coordinatorID: String

    /// Creates an acknowledgement.
    public init(requestID: String, batchID: String, itemIndexes: [UInt32], itemCount: UInt32, coordinatorID: String = "") {
        self.requestID = requestID
        self.batchID = batchID
        self.itemIndexes = itemIndexes
        self.itemCount = itemCount
        self.coordinatorID = coordinatorID
    }
}
