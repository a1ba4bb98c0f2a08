import Foundation
import Wire

/// Routing the coordinator's answers to whoever waits for them (``ClientRequests``): by request ID, then
/// by batch ID.
extension ClusterClient {
    func route(_ message: Message) {
        if case .refusal(let refusal) = message, refusal.code == .passive, refusedAsPassive() {
            return  // the request goes to the next coordinator (`ClusterClient+Turning.swift`)
        }
        watch?.answered()
        unanswered[Self.requestID(answeredBy: message)] = nil
        switch message {
        case .batchAccepted(let accepted):
            if let batchID = requests.takeReattachment(accepted.requestID) {
                requests.reattached(batchID, to: accepted.coordinatorID)
                return
            }
            guard let continuation = takeAcceptance(accepted.requestID) else { return }
            continuation.yield(
                accepted.attached
                    ? .attached(batchID: accepted.batchID, itemCount: Int(accepted.itemCount))
                    : .accepted(batchID: accepted.batchID, itemCount: Int(accepted.itemCount)))
            follow(
                accepted.batchID, continuation, itemCount: Int(accepted.itemCount),
                coordinatorID: accepted.coordinatorID)
        case .retryAccepted(let accepted):
            retryAccepted(accepted)
        case .itemFinished(let item):
            receiveItems([item])
        case .itemsFinished(let items):
            receiveItems(items)
        case .itemsAdded(let added):
            requests.itemsAdded(added)?.yield(.itemsAdded(added))
        case .batchFinished(let finished):
            switch requests.finish(finished.batchID, newRequestID: { UUID().uuidString }) {
            case .unknown:
                break
            case .refetch(let requestID):
                // Items went missing (sent just before a coordinator crash): ask for them, once.
                send(.fetchResults(FetchResults(requestID: requestID, batchID: finished.batchID)))
            case .finished(let continuation):
                continuation.yield(.finished(finished))
                continuation.finish()
            }
        case .statusReply(let reply):
            requests.takeReply(reply.requestID)?.resolve(with: reply)
        case .uploadRequest(let request):
            uploads.enqueue(request)
        case .cancelAccepted(let accepted):
            requests.takeReply(accepted.requestID)?.resolve(with: accepted)
        case .refusal(let refusal):
            let error = ClusterClientError.refused(refusal.reason)
            if let batchID = requests.takeReattachment(refusal.requestID) {
                // Refused for want of a role (its key was taken off a list meanwhile): not a forgotten batch.
                requests.endBatch(
                    batchID,
                    throwing: refusal.code == .forbidden
                        ? .refused(refusal.reason) : .batchForgotten(batchID: batchID, reason: refusal.reason))
            } else if let continuation = takeAcceptance(refusal.requestID) {
                continuation.finish(throwing: error)
            } else if let pending = requests.takeReply(refusal.requestID) {
                pending.fail(pending.error(for: refusal))
            } else if refusal.requestID.isEmpty {
                // A refusal of something without a request ID (another protocol version, or a minor-1
                // coordinator refusing a cancel): tell everyone.
                requests.failAll(error)
            }
        default:
            break
        }
    }

    /// The stream of the request `requestID` that awaits its acceptance, no longer awaiting it.
    func takeAcceptance(_ requestID: String) -> AsyncThrowingStream<BatchEvent, any Error>.Continuation? {
        requests.takeAcceptance(requestID)
    }

    /// Streams a batch's items to `continuation` from now on, `received` counting as passed on already.
    func follow(
        _ batchID: String, _ continuation: AsyncThrowingStream<BatchEvent, any Error>.Continuation, itemCount: Int,
        coordinatorID: String, received: Set<UInt32> = []
    ) {
        requests.follow(batchID, continuation, itemCount: itemCount, coordinatorID: coordinatorID, received: received)
        startWatchdog()
    }

    /// Passes finished items on, once each (a repeat, sent again after a re-attach, is dropped), one
    /// event per batch: a group wakes its reader once.
    private func receiveItems(_ items: [ItemFinished]) {
        var start = items.startIndex
        while start < items.endIndex {
            let batchID = items[start].batchID
            var end = start
            while end < items.endIndex, items[end].batchID == batchID { end += 1 }
            if let (continuation, fresh) = requests.fresh(items[start..<end], of: batchID) {
                if fresh.count == 1, let only = fresh.first {
                    continuation.yield(.itemFinished(only))
                } else if !fresh.isEmpty {
                    continuation.yield(.itemsFinished(fresh))
                }
            }
            start = end
        }
    }

    /// A coordinator instance other than the one that accepted a running batch answered: the
    /// coordinator restarted. Re-attach to each such batch; repeated items are dropped on arrival.
    func noticeCoordinator(_ coordinatorID: String) {
        for request in requests.reattachments(answeredBy: coordinatorID, newRequestID: { UUID().uuidString }) {
            send(.fetchResults(FetchResults(requestID: request.requestID, batchID: request.batchID)))
        }
    }
}
