import Wire

/// Cancels, by a client or at a batch's deadline: the registry decides which items, and each is ended
/// once, here: its task withdrawn from the dispatcher (cancelled on its worker if it runs there), its place
/// in a host's line given up, a pending retry dropped. A result that comes later finds no item and is ignored.
extension CoordinatorCore {
    mutating func cancel(_ request: CancelBatch, from peer: PeerIdentity) {
        let cancellation = registry.cancel(request, from: peer, now: eventInstant)
        if cancellation.isAccepted {
            log(
                .info, "cancelling",
                [
                    "batch": request.batchID, "items": request.itemIndexes.isEmpty ? "all" : "\(request.itemIndexes)",
                    "cancelled": "\(cancellation.items.count)",
                ])
            journal(.cancelled(request))
        }
        send(cancellation.out)  // the answer, before the items it cancelled finish
        cancelItems(cancellation.items, of: request.batchID, reason: BatchCancelledError(batchID: request.batchID))
    }

    /// Cancels a batch's unfinished items because its deadline passed; journaled like a client's cancel.
    mutating func cancelAtDeadline(_ batchID: String, seconds: UInt32) {
        let request = CancelBatch(batchID: batchID)
        let cancellation = registry.cancel(request, from: nil, now: eventInstant)
        guard cancellation.isAccepted, !cancellation.items.isEmpty else { return }
        log(
            .info, "batch deadline passed; cancelling its unfinished items",
            ["batch": batchID, "deadline": "\(seconds) s", "cancelled": "\(cancellation.items.count)"])
        journal(.cancelled(request))
        cancelItems(cancellation.items, of: batchID, reason: BatchDeadlineError(seconds: seconds))
    }

    /// Ends each item with `reason`: a task in the dispatcher is withdrawn first (once: the item's end
    /// forgets it, so nothing is withdrawn or told twice).
    private mutating func cancelItems(_ indexes: [Int], of batchID: String, reason: any Error) {
        for index in indexes {
            // Every task of a started item: the current one, and a tilt-shift chained to its download.
            for task in runs[batchID]?.items[index]?.tasks ?? [] {
                send(dispatcher.cancel(key: task.taskKey, reason: "cancelled"))
            }
            finishItem(index, of: batchID, outcome: .failure(ItemRun.cancelled(by: reason)))
        }
    }
}

extension ItemRun {
    /// How an item cancelled by the coordinator (`reason`: a client's cancel, a deadline) ends.
    static func cancelled(by reason: any Error) -> TaskFailure {
        TaskFailure(code: .cancelled, message: "\(reason)")
    }
}
