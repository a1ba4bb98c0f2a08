import Wire

/// Running what failed again (`shiftwork retry BATCH`): the registry chooses the items of a finished
/// batch, the retry is journaled before the client hears of it, and the items run again as new attempts
/// of the same batch, their results streamed to the batch's audience as a submission's are.
extension CoordinatorCore {
    mutating func retry(_ request: RetryBatch, from peer: PeerIdentity) {
        let items: [Int]
        switch registry.retrySelection(request, now: eventInstant) {
        case .refused(let refusal):
            return send([Outbound(peer: peer, message: .refusal(refusal))])
        case .items(let selected):
            items = selected
        }
        let batchID = request.batchID
        guard !items.isEmpty else {
            return send(registry.reopen([], of: batchID, for: peer, requestID: request.requestID, coordinatorID: dispatcher.coordinatorID))
        }
        guard let plan = rerunPlans[batchID] else {
            return send([Outbound(peer: peer, message: .refusal(Refusal(requestID: request.requestID, code: .unavailable,
                reason: "batch \(batchID) cannot be run again: this coordinator no longer has its plan")))])
        }
        journal(.retried(batchID: batchID, itemIndexes: items.map { UInt32($0) }))
        let out = registry.reopen(items, of: batchID, for: peer, requestID: request.requestID, coordinatorID: dispatcher.coordinatorID)
        guard let reopened = registry.batches[batchID] else { return }
        log(.info, "batch retried", ["batch": batchID, "client": "\(peer)", "items": "\(items.count)"])
        send(out)
        deadlines.set(batchID, seconds: plan.submit.deadlineSeconds, from: eventInstant)
        adopt(reopened, submit: plan.submit, client: reopened.owner)
    }
}
