import Wire

/// Attaching a client to a batch (`FetchResults`): the answer, the catch-up on the items finished before it
/// attached, and joining the batch's audience once caught up.
extension BatchRegistry {
    /// A client (re-)attaches to a batch (`FetchResults`): it is told the batch's size and, once it has
    /// been sent every finished item (`catchUp`), joins the batch's audience. Returns the answer, and the
    /// catch-up to run (`nil`: refused, or already catching up).
    /// With `attached`, the answer says the client was attached to it by an idempotency key (the
    /// `BatchAccepted` of a `SubmitBatch` whose key named it).
    mutating func attach(
        _ request: FetchResults, from peer: PeerIdentity, coordinatorID: String,
        attached: Bool = false, now: ContinuousClock.Instant = .now
    ) -> ([Outbound], CatchUp?) {
        func refuse(_ code: RefusalCode, _ reason: String) -> ([Outbound], CatchUp?) {
            (
                [
                    Outbound(
                        peer: peer, message: .refusal(Refusal(requestID: request.requestID, code: code, reason: reason))
                    )
                ], nil
            )
        }
        guard let batch = batches[request.batchID] else {
            let refusal = unknownBatch(
                request.batchID, requestID: request.requestID, now: now,
                otherwise:
                    "no batch \(request.batchID): it is unknown to this coordinator (finished long ago, or accepted by a "
                    + "coordinator that ran without --data-dir). `shiftwork status` lists the batches it knows.")
            return ([Outbound(peer: peer, message: .refusal(refusal))], nil)
        }
        guard keepsResults else {
            if attached {
                return refuse(
                    .noStoredResults,
                    "batch \(batch.batchID) was submitted with this idempotency key already "
                        + "and no second batch was made; this coordinator keeps no results to send again (start it with "
                        + "--data-dir DIR for that): `shiftwork status \(batch.batchID)` shows how it goes")
            }
            return refuse(
                .noStoredResults,
                "this coordinator keeps no results to send again: start it with --data-dir DIR "
                    + "to fetch the results of a batch later, or after a restart")
        }
        guard replaying[batch.batchID]?.contains(peer) != true else { return ([], nil) }  // already catching up
        replaying[batch.batchID, default: []].insert(peer)
        var answer = BatchAccepted(
            requestID: request.requestID, batchID: batch.batchID, itemCount: UInt32(batch.items.count),
            coordinatorID: coordinatorID)
        answer.attached = attached
        let accepted = Outbound(peer: peer, message: .batchAccepted(answer))
        return (
            [accepted],
            CatchUp(
                batchID: batch.batchID, peer: peer, announced: batch.items.count,
                sent: Array(repeating: false, count: batch.items.count), summary: batch.summary)
        )
    }

    /// The next part of a catch-up: announcements of items added since the client was last told the
    /// batch's size, and the finished items it has not been sent (without their output bytes), which
    /// count as sent from now on. Empty once it has them all, or when the batch is gone.
    func catchUp(_ progress: inout CatchUp) -> (added: [ItemsAdded], finished: [ItemFinished]) {
        guard let batch = batches[progress.batchID] else { return ([], []) }
        progress.summary = batch.summary
        var added: [ItemsAdded] = []
        if batch.items.count > progress.announced {
            added = additions(of: batch, from: progress.announced)
            progress.sent += repeatElement(false, count: batch.items.count - progress.announced)
            progress.announced = batch.items.count
        }
        let due = batch.finishedIndexes(notIn: progress.sent)
        for index in due { progress.sent[index] = true }
        return (added, due.compactMap { batch.finishedItem($0) })
    }

    /// A catch-up is over: the client joins the batch's audience, and is told the batch finished if it has.
    mutating func caughtUp(_ progress: CatchUp) -> [Outbound] {
        replaying[progress.batchID]?.remove(progress.peer)
        if replaying[progress.batchID]?.isEmpty == true { replaying[progress.batchID] = nil }
        guard let batch = batches[progress.batchID] else {
            return [Outbound(peer: progress.peer, message: .batchFinished(progress.summary))]  // retired meanwhile
        }
        if progress.peer != batch.client { subscribers[batch.batchID, default: []].insert(progress.peer) }
        return batch.isComplete ? [Outbound(peer: progress.peer, message: .batchFinished(batch.summary))] : []
    }

    /// A batch's items from `first` on as `ItemsAdded` announcements, one per run added by the same manifest.
    private func additions(of batch: RegisteredBatch, from first: Int) -> [ItemsAdded] {
        var result: [ItemsAdded] = []
        for index in first..<batch.items.count {
            let item = batch.items[index]
            let entry = BatchItem(source: item.source, outputName: item.outputName)
            let parent = UInt32(item.parent ?? 0)
            if let last = result.last, last.parentIndex == parent, Int(last.firstIndex) + last.items.count == index {
                result[result.count - 1].items.append(entry)
            } else {
                result.append(
                    ItemsAdded(batchID: batch.batchID, parentIndex: parent, firstIndex: UInt32(index), items: [entry]))
            }
        }
        return result
    }
}
