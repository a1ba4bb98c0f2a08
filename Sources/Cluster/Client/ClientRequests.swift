import Wire

/// Everything a `ClusterClient` waits for, in one value: submissions awaiting their acceptance, requests
/// awaiting their one reply, the batches whose items it streams, and the re-attachments in flight. Each
/// waiting request has a deadline; `expire(now:)` fails those past it. `failAll` is the one reset (on
/// close, a refused handshake, a refusal of everything).
///
/// A value with no socket and no clock of its own: the client's actor owns it, and its tests drive it
/// directly with real streams and continuations.
struct ClientRequests {
    typealias Events = AsyncThrowingStream<BatchEvent, any Error>.Continuation

    /// A submission (or attach, or retry) waiting for `BatchAccepted` / `RetryAccepted`.
    struct Acceptance {
        let events: Events
        let deadline: ContinuousClock.Instant
        /// What the stream fails with at the deadline.
        let expired: ClusterClientError
    }

    /// A request answered by one message (status, cancel).
    struct Reply {
        let pending: PendingReply
        let deadline: ContinuousClock.Instant
        let expired: ClusterClientError
    }

    /// A batch whose items are streamed to `events`.
    struct FollowedBatch {
        let events: Events
        /// Items already passed on (a repeat, sent again after a re-attach, is dropped).
        var received: Set<UInt32>
        /// The coordinator instance that accepted the batch (another one answering means it restarted).
        var coordinatorID: String
        var itemCount: Int
        /// Whether the batch ended with items missing and was asked for again (once).
        var refetched = false
    }

    private var acceptances: [String: Acceptance] = [:]
    private var replies: [String: Reply] = [:]
    private var batches: [String: FollowedBatch] = [:]
    /// Re-attachments in flight: request ID → batch ID.
    private var reattaching: [String: String] = [:]

    // MARK: Requests awaiting an answer

    mutating func awaitAcceptance(
        _ requestID: String, _ events: Events, deadline: ContinuousClock.Instant,
        expired: ClusterClientError
    ) {
        acceptances[requestID] = Acceptance(events: events, deadline: deadline, expired: expired)
    }

    /// The stream of the request `requestID` that awaits its acceptance, no longer awaiting it.
    mutating func takeAcceptance(_ requestID: String) -> Events? {
        acceptances.removeValue(forKey: requestID)?.events
    }

    mutating func awaitReply(
        _ requestID: String, _ pending: PendingReply, deadline: ContinuousClock.Instant,
        expired: ClusterClientError
    ) {
        replies[requestID] = Reply(pending: pending, deadline: deadline, expired: expired)
    }

    mutating func takeReply(_ requestID: String) -> PendingReply? {
        replies.removeValue(forKey: requestID)?.pending
    }

    /// Requests awaiting an acceptance or a reply.
    var waitingRequests: Int { acceptances.count + replies.count }

    /// Whether the request `requestID` still awaits its acceptance or reply.
    func isWaiting(_ requestID: String) -> Bool {
        acceptances[requestID] != nil || replies[requestID] != nil
    }

    /// Gives the request `requestID` a new deadline (it was sent again, to another coordinator).
    mutating func renew(_ requestID: String, deadline: ContinuousClock.Instant) {
        if let acceptance = acceptances[requestID] {
            acceptances[requestID] = Acceptance(
                events: acceptance.events, deadline: deadline, expired: acceptance.expired)
        }
        if let reply = replies[requestID] {
            replies[requestID] = Reply(pending: reply.pending, deadline: deadline, expired: reply.expired)
        }
    }

    /// Fails every request whose deadline is `now` or earlier with its `expired` error. Returns how many.
    @discardableResult
    mutating func expire(now: ContinuousClock.Instant) -> Int {
        var expired = 0
        for (requestID, acceptance) in acceptances where acceptance.deadline <= now {
            acceptances[requestID] = nil
            acceptance.events.finish(throwing: acceptance.expired)
            expired += 1
        }
        for (requestID, reply) in replies where reply.deadline <= now {
            replies[requestID] = nil
            reply.pending.fail(reply.expired)
            expired += 1
        }
        return expired
    }

    // MARK: Batches followed

    /// Streams a batch's items to `events` from now on, `received` counting as passed on already.
    mutating func follow(
        _ batchID: String, _ events: Events, itemCount: Int, coordinatorID: String,
        received: Set<UInt32> = []
    ) {
        batches[batchID] = FollowedBatch(
            events: events, received: received, coordinatorID: coordinatorID,
            itemCount: itemCount)
    }

    var hasRunningBatches: Bool { !batches.isEmpty }
    var anyRunningBatch: String? { batches.keys.first }
    func isFollowing(_ batchID: String) -> Bool { batches[batchID] != nil }

    /// Items were added to a running batch: its count grows; the stream to tell, if followed.
    mutating func itemsAdded(_ added: ItemsAdded) -> Events? {
        guard var batch = batches[added.batchID] else { return nil }
        batch.itemCount = Swift.max(batch.itemCount, Int(added.firstIndex) + added.items.count)
        batches[added.batchID] = batch
        return batch.events
    }

    /// The items of one batch not passed on yet (each counted as passed on from now), with the stream to
    /// pass them to; `nil` for a batch not followed.
    mutating func fresh(_ items: ArraySlice<ItemFinished>, of batchID: String) -> (Events, [ItemFinished])? {
        guard var batch = batches[batchID] else { return nil }
        let fresh = items.filter { batch.received.insert($0.itemIndex).inserted }
        batches[batchID] = batch
        return (batch.events, fresh)
    }

    /// What to do with a batch's `BatchFinished`.
    enum Finish {
        /// Not followed: nothing.
        case unknown
        /// Items went missing (sent just before a coordinator crash): ask for them, once, with this request.
        case refetch(requestID: String)
        /// Done: the stream gets the event and ends; the batch is forgotten.
        case finished(Events)
    }

    mutating func finish(_ batchID: String, newRequestID: () -> String) -> Finish {
        guard var batch = batches[batchID] else { return .unknown }
        if batch.received.count < batch.itemCount, !batch.refetched {
            batch.refetched = true
            batches[batchID] = batch
            let requestID = newRequestID()
            reattaching[requestID] = batchID
            return .refetch(requestID: requestID)
        }
        batches[batchID] = nil
        return .finished(batch.events)
    }

    /// Ends a batch's stream with `error` and forgets the batch.
    mutating func endBatch(_ batchID: String, throwing error: ClusterClientError) {
        batches.removeValue(forKey: batchID)?.events.finish(throwing: error)
    }

    /// Fails every running batch with `error` (the coordinator stopped answering).
    mutating func failRunningBatches(_ error: ClusterClientError) {
        for batch in batches.values { batch.events.finish(throwing: error) }
        batches = [:]
    }

    // MARK: Re-attachments

    /// Batches followed that another coordinator instance than `coordinatorID` accepted, and that no
    /// re-attachment is asked for yet: each gets a new re-attachment request (request ID, batch ID).
    mutating func reattachments(
        answeredBy coordinatorID: String, newRequestID: () -> String
    ) -> [(requestID: String, batchID: String)] {
        guard !coordinatorID.isEmpty else { return [] }
        let asked = Set(reattaching.values)
        var requests: [(requestID: String, batchID: String)] = []
        for (batchID, batch) in batches where batch.coordinatorID != coordinatorID && !asked.contains(batchID) {
            let requestID = newRequestID()
            reattaching[requestID] = batchID
            requests.append((requestID, batchID))
        }
        return requests
    }

    /// Every batch followed, each with a new re-attachment request (request ID, batch ID); those in flight
    /// are forgotten (their answers would come from the coordinator turned away from): the client turned.
    mutating func reattachEverything(newRequestID: () -> String) -> [(requestID: String, batchID: String)] {
        reattaching = [:]
        return batches.keys.sorted().map { batchID in
            let requestID = newRequestID()
            reattaching[requestID] = batchID
            return (requestID, batchID)
        }
    }

    /// The batch a re-attachment request was for, no longer in flight; `nil` for another request.
    mutating func takeReattachment(_ requestID: String) -> String? {
        reattaching.removeValue(forKey: requestID)
    }

    /// A re-attachment was accepted by `coordinatorID`: the batch counts as that instance's from now.
    mutating func reattached(_ batchID: String, to coordinatorID: String) {
        batches[batchID]?.coordinatorID = coordinatorID
    }

    // MARK: The reset

    /// Fails everything waiting (requests, replies, batches) with `error` and forgets it all.
    mutating func failAll(_ error: ClusterClientError) {
        let acceptances = self.acceptances
        let replies = self.replies
        let batches = self.batches
        self = ClientRequests()
        for acceptance in acceptances.values { acceptance.events.finish(throwing: error) }
        for batch in batches.values { batch.events.finish(throwing: error) }
        for reply in replies.values { reply.pending.fail(error) }
    }
}
