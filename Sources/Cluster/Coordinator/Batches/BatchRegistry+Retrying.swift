import Wire

/// The registry's part in `shiftwork retry`: which items a `RetryBatch` re-runs (or why not), and
/// reopening them.
extension BatchRegistry {
    /// What a retry would re-run.
    enum RetrySelection: Equatable {
        /// Refused, and why.
        case refused(Refusal)
        /// The items to run again, in index order; empty: nothing to re-run (every item succeeded).
        case items([Int])
    }

    /// Which items `request` re-runs, or why it cannot: nothing changes until `reopen` (the coordinator
    /// journals the retry in between).
    func retrySelection(_ request: RetryBatch, now: ContinuousClock.Instant = .now) -> RetrySelection {
        let id = request.batchID
        func refuse(_ code: RefusalCode, _ reason: String) -> RetrySelection {
            .refused(Refusal(requestID: request.requestID, code: code, reason: reason))
        }
        guard let batch = batches[id] else {
            return .refused(
                unknownBatch(
                    id, requestID: request.requestID, now: now,
                    otherwise:
                        "no batch \(id): it is unknown to this coordinator (finished long ago, or accepted by a coordinator that "
                        + "ran without --data-dir). `shiftwork status` lists the batches it knows."))
        }
        var named: [(name: String, index: Int)] = []
        for name in request.items {
            guard let index = batch.itemIndex(named: name) else {
                return refuse(
                    .invalidRequest,
                    "batch \(id) has no item \(name): name an item by its output name, its source "
                        + "or its index (`shiftwork status \(id)` lists them)")
            }
            if !named.contains(where: { $0.index == index }) { named.append((name, index)) }
        }
        if !batch.isComplete {
            let what =
                named.first { !batch.items[$0.index].state.isFinished }.map {
                    "item \($0.name) of batch \(id) is still running"
                }
                ?? "batch \(id) is still running (\(batch.unfinishedCount) of \(batch.items.count) items unfinished)"
            return refuse(
                .invalidRequest, "\(what): wait until the batch has finished (or `shiftwork cancel \(id)`), then retry")
        }
        if let done = named.first(where: { batch.items[$0.index].state == .succeeded }) {
            return refuse(
                .invalidRequest,
                "item \(done.name) of batch \(id) succeeded: its output is kept and not made again "
                    + "(`shiftwork results \(id)` fetches it); retry re-runs failed and cancelled items")
        }
        let selected =
            named.isEmpty
            ? batch.items.indices.filter { [.failed, .cancelled].contains(batch.items[$0].state) }
            : named.map(\.index).sorted()
        let pending = pendingItems[batch.client, default: 0]
        if pending + selected.count > limits.maxPendingItemsPerClient {
            return refuse(
                .limit,
                "the batch's client already has \(pending) unfinished items and the retry would add "
                    + "\(selected.count), more than this coordinator allows a client (\(limits.maxPendingItemsPerClient), its "
                    + "--max-pending-items-per-client): wait for earlier batches to finish, or name fewer items with --items"
            )
        }
        if let problem = ClientUsage.refusal(
            of: selected.count, addingBatch: false,
            usage: clientUsage[batch.owner] ?? ClientUsage(), limits: limits)
        {
            return refuse(.limit, problem)
        }
        return .items(selected)
    }

    /// Runs a finished batch's `items` (from `retrySelection`) again: they are unfinished once more, with new
    /// task keys (the batch's other items have none: their operations are not planned again), the batch
    /// counts as running, and `peer` joins its audience. Returns `RetryAccepted` for `peer`.
    mutating func reopen(
        _ items: [Int], of batchID: String, for peer: PeerIdentity, requestID: String,
        coordinatorID: String
    ) -> [Outbound] {
        guard var batch = batches[batchID] else { return [] }
        if !items.isEmpty {
            batches[batchID] = nil  // no copy while it changes
            let keys = items.map { _ in takeTaskKeys(batch.tasksPerItem) }
            batch.reopen(items, firstTaskKeys: keys)
            batches[batchID] = batch
            pendingItems[batch.client, default: 0] += items.count
            changeUsage(of: batch.owner, queuedItems: items.count)
            finishedBatches.removeAll { $0.batchID == batchID }
            if peer != batch.client { subscribers[batchID, default: []].insert(peer) }
        }
        return [
            Outbound(
                peer: peer,
                message: .retryAccepted(
                    RetryAccepted(
                        requestID: requestID, batchID: batchID, itemIndexes: items.map { UInt32($0) },
                        itemCount: UInt32(batch.items.count),
                        coordinatorID: coordinatorID)))
        ]
    }
}
