import Foundation
import Wire

/// Re-running what failed (`shiftwork retry BATCH`): the registry chooses the items of a finished batch
/// that run again; the retry is journaled (synced) before the client hears of it, and the items' operations
/// are planned again as new attempts of the same batch, in a group of their own. Their results stream to
/// the batch's audience, the retrying client included, as a submission's do.
extension Coordinator {
    func retry(_ request: RetryBatch, from peer: PeerIdentity) {
        finishItems()  // items that ended already count as finished
        let items: [Int]
        switch registry.retrySelection(request) {
        case .refused(let refusal):
            send([Outbound(peer: peer, message: .refusal(refusal))])
            return
        case .items(let selected):
            items = selected
        }
        let batchID = request.batchID
        guard !items.isEmpty else {
            send(registry.reopen([], of: batchID, for: peer, requestID: request.requestID, coordinatorID: dispatcher.coordinatorID))
            return
        }
        guard let plan = rerunPlans[batchID] else {
            send([Outbound(peer: peer, message: .refusal(Refusal(requestID: request.requestID, code: .unavailable,
                reason: "batch \(batchID) cannot be run again: this coordinator no longer has its plan")))])
            return
        }
        do {
            try journal?.recordRetried(batchID: batchID, itemIndexes: items.map { UInt32($0) })
        } catch {
            logger.error("retry refused: the journal cannot be written", metadata: ["batch": "\(batchID)", "error": "\(error)"])
            send([Outbound(peer: peer, message: .refusal(Refusal(requestID: request.requestID, code: .unavailable,
                reason: "the retry could not be accepted: \(error)")))])
            return
        }
        let out = registry.reopen(items, of: batchID, for: peer, requestID: request.requestID,
                                  coordinatorID: dispatcher.coordinatorID)
        guard let reopened = registry.batches[batchID] else { return }
        logger.info("batch retried", metadata: ["batch": "\(batchID)", "client": "\(peer)", "items": "\(items.count)"])
        send(out)
        // Its items are planned in turn, as a submission's are; one the engine refuses fails with why.
        let batch = BatchOperation(reopened, planner: makePlanner(batchID: batchID, submit: plan.submit), itemEnded: itemEnded)
        batchDeadlines.set(batchID, seconds: plan.submit.deadlineSeconds, from: .now)
        share(reopened, of: MessageSender(identity: reopened.client, key: access.owners[batchID]).client)
        adopt(batch)
        start(batch)
    }
}
