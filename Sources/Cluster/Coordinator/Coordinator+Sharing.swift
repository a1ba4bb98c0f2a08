import Messaging
import Wire

/// Sharing the cluster: whose a batch is and its priority go to the dispatcher's fair share
/// (`FairShareQueue`), and a submission whose idempotency key names a batch the coordinator keeps
/// attaches to that batch instead of making a second one.
extension Coordinator {
    /// A submission whose idempotency key names a batch this coordinator keeps (submitted by the same
    /// client, as `ClientIdentity.idempotencyScope` tells): the client is attached to that batch, as with
    /// `FetchResults`, and told so (`BatchAccepted.attached`). Returns `false` when there is no such batch.
    func attachByIdempotencyKey(_ submit: SubmitBatch, from sender: MessageSender) -> Bool {
        let peer = sender.identity
        guard
            let batchID = registry.batchID(
                forKey: submit.idempotencyKey,
                scope: sender.client.idempotencyScope)
        else { return false }
        logger.info(
            "submission attached to the batch of its idempotency key",
            metadata: [
                "batch": "\(batchID)", "client": "\(peer)", "key": "\(submit.idempotencyKey)",
            ])
        attach(peer, FetchResults(requestID: submit.requestID, batchID: batchID), attached: true)
        return true
    }
}
