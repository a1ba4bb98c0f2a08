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
            return send(
                registry.reopen(
                    [], of: batchID, for: peer, requestID: request.requestID, coordinatorID: dispatcher.coordinatorID))
        }
        guard let plan = rerunPlans[batchID] else {
            return send([
                Outbound(
                    peer: peer,
                    message: .refusal(
                        Refusal(
                            requestID: request.requestID, code: .unavailable,
                            reason: "batch \(batchID) cannot be run again: this coordinator no longer has its plan")))
            ])
        }
        // Before the client hears of it: the retry survives a crash of the coordinator (`reopen` follows).
        pendingRetries[batchID] = PendingRetry(request: request, peer: peer, items: items, plan: plan)
        append(
            .recordDurably(
                .retried(batchID: batchID, itemIndexes: items.map { UInt32($0) }), awaiting: .retry(batchID: batchID)))
    }

    /// The journal holds the retry: the items are reopened, the client told, the items run again.
    mutating func reopen(_ batchID: String) {
        guard let pending = pendingRetries.removeValue(forKey: batchID) else { return }
        let (request, peer, items, plan) = (pending.request, pending.peer, pending.items, pending.plan)
        let out = registry.reopen(
            items, of: batchID, for: peer, requestID: request.requestID, coordinatorID: dispatcher.coordinatorID)
        guard let reopened = registry.batches[batchID] else { return }
        log(.info, "batch retried", ["batch": batchID, "client": "\(peer)", "items": "\(items.count)"])
        send(out)
        deadlines.set(batchID, seconds: plan.submit.deadlineSeconds, from: eventInstant)
        adopt(reopened, submit: plan.submit, client: reopened.owner, uploadClient: peer, uploads: plan.uploads)
    }

    /// The journal could not take the retry: nothing was reopened; the client is refused with why.
    mutating func refuseUnrecordedRetry(_ batchID: String, reason: String) {
        guard let pending = pendingRetries.removeValue(forKey: batchID) else { return }
        log(.error, "retry refused: the journal could not record it", ["batch": batchID, "error": reason])
        send([
            Outbound(
                peer: pending.peer,
                message: .refusal(
                    Refusal(
                        requestID: pending.request.requestID, code: .unavailable,
                        reason: "the retry could not be accepted: \(reason)")))
        ])
    }
}
