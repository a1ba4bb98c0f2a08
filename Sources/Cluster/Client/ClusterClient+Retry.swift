import Foundation
import Wire

/// `shiftwork retry`'s side of the client: asking for a finished batch's items to run again, and following
/// the re-run items (`RetryBatch` → `RetryAccepted`, then their `ItemFinished` as for a submission).
extension ClusterClient {
    /// Runs the failed and cancelled items of a finished batch again, or the items named (each by its
    /// output name, its source or its index). The stream yields `.retrying` with the items that run again,
    /// then each of them as it finishes, then `.finished`, and then ends; with nothing to re-run (every
    /// item succeeded), `.retrying` with no items, and the end. It throws `ClusterClientError.refused` when
    /// the coordinator does not know the batch, the batch is still running, or a name is no item of it.
    public func retry(batchID: String, items: [String] = []) -> AsyncThrowingStream<BatchEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BatchEvent, any Error>.makeStream()
        let requestID = UUID().uuidString
        let request = RetryBatch(requestID: requestID, batchID: batchID, items: items, acceptsBatches: true)
        awaitAcceptance(requestID, continuation, sending: .retryBatch(request))
        return stream
    }

    /// The coordinator accepted a retry: the stream yields `.retrying`, then follows the re-run items (or
    /// ends at once when none runs again).
    func retryAccepted(_ accepted: RetryAccepted) {
        guard let continuation = takeAcceptance(accepted.requestID) else { return }
        continuation.yield(.retrying(accepted))
        guard !accepted.itemIndexes.isEmpty else { return continuation.finish() }
        // The items that are not run again count as received: only the retried ones are awaited.
        let kept = Set(UInt32(0)..<accepted.itemCount).subtracting(accepted.itemIndexes)
        follow(
            accepted.batchID, continuation, itemCount: Int(accepted.itemCount), coordinatorID: accepted.coordinatorID,
            received: kept)
    }
}
