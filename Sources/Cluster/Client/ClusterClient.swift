import Foundation
import Messaging
import Wire

/// A client of the coordinator: submits batches, attaches to them, asks for status, cancels.
///
/// One DEALER socket carries every request; a reader task routes each answer to whoever waits for it
/// (by request ID, then by batch ID). The socket has a stable identity, so that a restarted coordinator
/// (with a journal) streams a batch's remaining results to the client that submitted it; when the
/// client sees another coordinator instance answer, it re-attaches to its running batches
/// (``FetchResults``) and drops the items it already has.
public actor ClusterClient {
    private let endpoint: String
    private let channel: SocketChannel
    /// The client's own ZeroMQ context, ended by `close()`; `nil` when the caller's.
    private let ownedContext: MessagingContext?
    private let responseTimeout: Duration
    private let maxMessageSize: Int64
    private var reader: Task<Void, Never>?
    private var pendingSubmissions: [String: AsyncThrowingStream<BatchEvent, any Error>.Continuation] = [:]
    private var batches: [String: AsyncThrowingStream<BatchEvent, any Error>.Continuation] = [:]
    /// Per running batch: the items already passed on (to drop repeats) and the coordinator instance
    /// that accepted it.
    private var received: [String: Set<UInt32>] = [:]
    private var coordinatorOfBatch: [String: String] = [:]
    private var itemCounts: [String: Int] = [:]
    /// Batches that ended with items missing and were asked for again once.
    private var refetched: Set<String> = []
    /// Re-attachments in flight: request ID → batch ID.
    private var reattaching: [String: String] = [:]
    /// Requests answered by one message (status, cancel), by request ID.
    private var pendingReplies: [String: PendingReply] = [:]
    private var isClosed = false
    /// Whether the socket uses CurveZMQ (for the hints of `noAnswer`).
    private let usingKeys: Bool
    /// Set once the coordinator refused the handshake: every request fails at once with it.
    private var handshakeRefusal: ClusterClientError?
    /// Reads the socket monitor's handshake failures (with CurveZMQ only).
    private var handshakeWatcher: Task<Void, Never>?
    /// One timer per submission awaiting acceptance; cancelled when the answer comes.
    private var acceptanceTimers: [String: Task<Void, Never>] = [:]
    private var watchdog: Task<Void, Never>?
    /// While a batch runs, the client asks the coordinator for its status this often, to notice a
    /// coordinator that went away instead of waiting for results forever.
    private let livenessInterval: Duration

    /// Connects to the coordinator at `endpoint`, with a ZeroMQ context of its own that `close()` ends.
    /// ZeroMQ connects lazily: an absent coordinator shows as `ClusterClientError.noAnswer` on the first
    /// request, after `responseTimeout`.
    public init(
        endpoint: String, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2)
    ) async throws {
        let context = try MessagingContext()
        do {
            try await self.init(endpoint: endpoint, context: context, ownsContext: true, responseTimeout: responseTimeout,
                                socketOptions: socketOptions, livenessInterval: livenessInterval)
        } catch {
            await context.terminate()
            throw error
        }
    }

    /// Connects within `context`, which stays the caller's to terminate (shared with an in-process
    /// coordinator for `inproc://`, as `EmbeddedCluster` does).
    package init(
        endpoint: String, context: MessagingContext, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2)
    ) async throws {
        try await self.init(endpoint: endpoint, context: context, ownsContext: false, responseTimeout: responseTimeout,
                            socketOptions: socketOptions, livenessInterval: livenessInterval)
    }

    private init(
        endpoint: String, context: MessagingContext, ownsContext: Bool, responseTimeout: Duration,
        socketOptions: SocketOptions, livenessInterval: Duration
    ) async throws {
        self.ownedContext = ownsContext ? context : nil
        self.livenessInterval = livenessInterval
        var options = socketOptions
        options.lingerMilliseconds = min(options.lingerMilliseconds, 200)
        if options.identity == nil {
            options.identity = Array("client-\(UUID().uuidString.lowercased())".utf8)
        }
        self.endpoint = endpoint
        self.responseTimeout = responseTimeout
        self.maxMessageSize = options.maxMessageSize
        self.usingKeys = options.curve != nil
        // With CurveZMQ, a refused handshake is reported at once by the socket's monitor (libzmq would
        // otherwise retry silently until the response timeout).
        let (failures, reportFailure) = AsyncStream<HandshakeFailure>.makeStream()
        var onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
        if options.curve != nil {
            onHandshakeFailure = { failure in reportFailure.yield(failure) }
        }
        self.channel = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "client",
            onHandshakeFailure: onHandshakeFailure)
        let channel = self.channel
        self.reader = Task { await self.read(channel) }
        if options.curve != nil {
            self.handshakeWatcher = Task {
                for await failure in failures { self.handshakeFailed(failure) }
            }
        } else {
            reportFailure.finish()
        }
    }

    /// A refused handshake (not a connection reset) fails everything pending, and every later request.
    private func handshakeFailed(_ failure: HandshakeFailure) {
        if case .unspecified = failure.reason { return }  // e.g. the connection broke mid-handshake: retried
        let error = ClusterClientError.notAuthorized(endpoint: endpoint, failure: failure)
        handshakeRefusal = error
        for timer in acceptanceTimers.values { timer.cancel() }
        acceptanceTimers = [:]
        failEverything(error)
    }

    /// Submits a batch. The stream yields `.accepted`, then each item as it finishes, then `.finished`,
    /// and then ends. It throws `ClusterClientError.noAnswer` if the coordinator does not accept the
    /// batch within the response timeout.
    public func submit(_ batch: SubmitBatch) -> AsyncThrowingStream<BatchEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BatchEvent, any Error>.makeStream()
        let requestID = batch.requestID.isEmpty ? UUID().uuidString : batch.requestID
        var batch = batch
        batch.requestID = requestID
        batch.acceptsBatches = true  // route(_:) takes ItemFinishedBatch apart
        let message = WireCodec.encode(.submitBatch(batch))
        guard maxMessageSize < 0 || Int64(message.count) <= maxMessageSize else {
            continuation.finish(throwing: ClusterClientError.messageTooLarge(bytes: message.count, limit: maxMessageSize))
            return stream
        }
        awaitAcceptance(requestID, continuation, sending: message)
        return stream
    }

    /// Attaches to a batch the coordinator already has, e.g. one submitted by another process or before
    /// a restart. The stream yields `.accepted`, then every item finished so far, then the others as
    /// they finish, then `.finished`. It throws `ClusterClientError.refused` when the coordinator does
    /// not know the batch or keeps no results (it runs without `--data-dir`).
    public func results(batchID: String) -> AsyncThrowingStream<BatchEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BatchEvent, any Error>.makeStream()
        let requestID = UUID().uuidString
        awaitAcceptance(requestID, continuation,
                        sending: WireCodec.encode(.fetchResults(FetchResults(requestID: requestID, batchID: batchID))))
        return stream
    }

    /// Sends a request answered by `BatchAccepted` or `RetryAccepted` (or a refusal), and fails its stream
    /// with `noAnswer` if neither comes within the response timeout; at once after a refused handshake.
    func awaitAcceptance(
        _ requestID: String, _ continuation: AsyncThrowingStream<BatchEvent, any Error>.Continuation, sending message: [UInt8]
    ) {
        if let handshakeRefusal { return continuation.finish(throwing: handshakeRefusal) }
        pendingSubmissions[requestID] = continuation
        channel.send([message])
        let timeout = responseTimeout
        acceptanceTimers[requestID] = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self.expireSubmission(requestID)
        }
    }

    /// Asks for the cluster's status, or one batch's with its items when `batchID` is given.
    public func status(batchID: String = "") async throws -> StatusReply {
        try await awaitReply(
            sending: { .statusRequest(StatusRequest(requestID: $0, batchID: batchID)) },
            orFailWith: .noAnswer(endpoint: endpoint, waited: responseTimeout, usingKeys: usingKeys),
            PendingReply.status)
    }

    /// Cancels a batch, or some of its items, and returns the coordinator's acknowledgement (how many
    /// items were unfinished and are now cancelled). Their results (cancelled) reach whoever follows the batch.
    ///
    /// - Throws: `ClusterClientError.unknownBatch` when the coordinator does not know the batch,
    ///   `.cancelNotAcknowledged` when nothing answers within the response timeout.
    public func cancel(batchID: String, itemIndexes: [UInt32] = []) async throws -> CancelAccepted {
        try await awaitReply(
            sending: { .cancelBatch(CancelBatch(requestID: $0, batchID: batchID, itemIndexes: itemIndexes)) },
            orFailWith: .cancelNotAcknowledged(endpoint: endpoint, batchID: batchID, waited: responseTimeout),
            { PendingReply.cancel(batchID: batchID, $0) })
    }

    /// Sends the request `message` makes with a new request ID and waits for its one reply, or fails with
    /// `expired` after the response timeout.
    private func awaitReply<Reply>(
        sending message: (String) -> Message, orFailWith expired: ClusterClientError,
        _ pending: (CheckedContinuation<Reply, any Error>) -> PendingReply
    ) async throws -> Reply {
        if let handshakeRefusal { throw handshakeRefusal }
        let requestID = UUID().uuidString
        let timeout = responseTimeout
        Task {
            try? await Task.sleep(for: timeout)
            self.pendingReplies.removeValue(forKey: requestID)?.fail(expired)
        }
        return try await withCheckedThrowingContinuation { continuation in
            pendingReplies[requestID] = pending(continuation)
            send(message(requestID))
        }
    }

    /// Closes the socket (and ends its own ZeroMQ context); waiting requests fail with
    /// `ClusterClientError.closed`.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        await channel.close()
        reader?.cancel()
        handshakeWatcher?.cancel()
        watchdog?.cancel()
        for timer in acceptanceTimers.values { timer.cancel() }
        acceptanceTimers = [:]
        failEverything(ClusterClientError.closed)
        await ownedContext?.terminate()
    }

    // MARK: Routing answers

    private func read(_ channel: SocketChannel) async {
        for await received in channel.messageBatches {
            for frames in received {
                guard let payload = frames.last, let message = try? WireCodec.decode(payload) else { continue }
                if let violation = MessageBounds.violation(inAnswer: message) {
                    // A count no coordinator sends (it would size the client's tables): the request it answers
                    // fails with why; an answer to no request is dropped.
                    route(.refusal(Refusal(requestID: Self.requestID(answeredBy: message), code: violation.code,
                                           reason: "the coordinator's answer was refused: \(violation.reason)")))
                    continue
                }
                route(message)
            }
        }
        failEverything(ClusterClientError.closed)
    }

    /// The request ID an answer carries; a made-up one (answering nothing) for messages without one.
    private static func requestID(answeredBy message: Message) -> String {
        switch message {
        case .batchAccepted(let accepted): accepted.requestID
        case .retryAccepted(let accepted): accepted.requestID
        case .statusReply(let reply): reply.requestID
        default: "-"
        }
    }

    private func route(_ message: Message) {
        switch message {
        case .batchAccepted(let accepted):
            if reattaching.removeValue(forKey: accepted.requestID) != nil {
                coordinatorOfBatch[accepted.batchID] = accepted.coordinatorID
                return
            }
            guard let continuation = takeAcceptance(accepted.requestID) else { return }
            continuation.yield(accepted.attached ? .attached(batchID: accepted.batchID, itemCount: Int(accepted.itemCount))
                                                 : .accepted(batchID: accepted.batchID, itemCount: Int(accepted.itemCount)))
            follow(accepted.batchID, continuation, itemCount: Int(accepted.itemCount), coordinatorID: accepted.coordinatorID)
        case .retryAccepted(let accepted):
            retryAccepted(accepted)
        case .itemFinished(let item):
            receiveItems([item])
        case .itemsFinished(let items):
            receiveItems(items)
        case .itemsAdded(let added):
            guard let continuation = batches[added.batchID] else { return }
            let count = Int(added.firstIndex) + added.items.count
            itemCounts[added.batchID] = Swift.max(itemCounts[added.batchID] ?? 0, count)
            continuation.yield(.itemsAdded(added))
        case .batchFinished(let finished):
            let batchID = finished.batchID
            if (received[batchID]?.count ?? 0) < (itemCounts[batchID] ?? 0), !refetched.contains(batchID),
               batches[batchID] != nil {
                // Items went missing (sent just before a coordinator crash): ask for them, once.
                refetched.insert(batchID)
                let requestID = UUID().uuidString
                reattaching[requestID] = batchID
                send(.fetchResults(FetchResults(requestID: requestID, batchID: batchID)))
                return
            }
            guard let continuation = batches.removeValue(forKey: batchID) else { return }
            forget(batchID)
            continuation.yield(.finished(finished))
            continuation.finish()
        case .statusReply(let reply):
            pendingReplies.removeValue(forKey: reply.requestID)?.resolve(with: reply)
        case .cancelAccepted(let accepted):
            pendingReplies.removeValue(forKey: accepted.requestID)?.resolve(with: accepted)
        case .refusal(let refusal):
            let error = ClusterClientError.refused(refusal.reason)
            if let batchID = reattaching.removeValue(forKey: refusal.requestID) {
                // Refused for want of a role (its key was taken off a list meanwhile): not a forgotten batch.
                endBatch(batchID, throwing: refusal.code == .forbidden
                    ? .refused(refusal.reason) : .batchForgotten(batchID: batchID, reason: refusal.reason))
            } else if let continuation = takeAcceptance(refusal.requestID) {
                continuation.finish(throwing: error)
            } else if let pending = pendingReplies.removeValue(forKey: refusal.requestID) {
                pending.fail(pending.error(for: refusal))
            } else if refusal.requestID.isEmpty {
                // A refusal of something without a request ID (another protocol version, or a minor-1
                // coordinator refusing a cancel): tell everyone.
                failEverything(error)
            }
        default:
            break
        }
    }

    /// The stream of the request `requestID` that awaits its acceptance, no longer awaiting it.
    func takeAcceptance(_ requestID: String) -> AsyncThrowingStream<BatchEvent, any Error>.Continuation? {
        acceptanceTimers.removeValue(forKey: requestID)?.cancel()
        return pendingSubmissions.removeValue(forKey: requestID)
    }

    /// Checks, while batches run, that the coordinator still answers; fails them if it does not.
    private func startWatchdog() {
        guard watchdog == nil else { return }
        watchdog = Task { [livenessInterval, responseTimeout, endpoint] in
            while !Task.isCancelled {
                try? await Task.sleep(for: livenessInterval)
                guard let batchID = self.anyRunningBatch() else { break }
                do {
                    let reply = try await self.status(batchID: batchID)
                    self.noticeCoordinator(reply.coordinatorID)
                } catch ClusterClientError.noAnswer {
                    self.failRunningBatches(.lostContact(endpoint: endpoint, batchID: batchID, waited: responseTimeout))
                    break
                } catch {
                    break
                }
            }
            self.watchdogEnded()
        }
    }

    /// Passes finished items on, once each (a repeat, sent again after a re-attach, is dropped), one
    /// event per batch: a group wakes its reader once.
    private func receiveItems(_ items: [ItemFinished]) {
        var start = items.startIndex
        while start < items.endIndex {
            let batchID = items[start].batchID
            var end = start
            while end < items.endIndex, items[end].batchID == batchID { end += 1 }
            if let continuation = batches[batchID] {
                let fresh = items[start..<end].filter { received[batchID]?.insert($0.itemIndex).inserted == true }
                if fresh.count == 1, let only = fresh.first {
                    continuation.yield(.itemFinished(only))
                } else if !fresh.isEmpty {
                    continuation.yield(.itemsFinished(fresh))
                }
            }
            start = end
        }
    }

    /// Streams a batch's items to `continuation` from now on, `received` counting as passed on already.
    func follow(
        _ batchID: String, _ continuation: AsyncThrowingStream<BatchEvent, any Error>.Continuation, itemCount: Int,
        coordinatorID: String, received: Set<UInt32> = []
    ) {
        batches[batchID] = continuation
        self.received[batchID] = received
        coordinatorOfBatch[batchID] = coordinatorID
        itemCounts[batchID] = itemCount
        startWatchdog()
    }

    private func anyRunningBatch() -> String? { batches.keys.first }

    /// A coordinator instance other than the one that accepted a running batch answered: the
    /// coordinator restarted. Re-attach to each such batch; repeated items are dropped on arrival.
    private func noticeCoordinator(_ coordinatorID: String) {
        guard !coordinatorID.isEmpty else { return }
        for (batchID, accepter) in coordinatorOfBatch where accepter != coordinatorID && batches[batchID] != nil {
            guard !reattaching.values.contains(batchID) else { continue }
            let requestID = UUID().uuidString
            reattaching[requestID] = batchID
            send(.fetchResults(FetchResults(requestID: requestID, batchID: batchID)))
        }
    }

    private func endBatch(_ batchID: String, throwing error: ClusterClientError) {
        batches.removeValue(forKey: batchID)?.finish(throwing: error)
        forget(batchID)
    }

    private func forget(_ batchID: String) {
        received[batchID] = nil
        coordinatorOfBatch[batchID] = nil
        itemCounts[batchID] = nil
        refetched.remove(batchID)
    }

    private func watchdogEnded() {
        watchdog = nil
        if !batches.isEmpty && !isClosed { startWatchdog() }
    }

    private func failRunningBatches(_ error: ClusterClientError) {
        for continuation in batches.values { continuation.finish(throwing: error) }
        batches = [:]
        received = [:]
        coordinatorOfBatch = [:]
        itemCounts = [:]
    }

    private func expireSubmission(_ requestID: String) {
        acceptanceTimers[requestID] = nil
        pendingSubmissions.removeValue(forKey: requestID)?
            .finish(throwing: ClusterClientError.noAnswer(endpoint: endpoint, waited: responseTimeout, usingKeys: usingKeys))
    }

    private func failEverything(_ error: ClusterClientError) {
        for continuation in pendingSubmissions.values { continuation.finish(throwing: error) }
        for continuation in batches.values { continuation.finish(throwing: error) }
        for pending in pendingReplies.values { pending.fail(error) }
        pendingSubmissions = [:]
        batches = [:]
        pendingReplies = [:]
        received = [:]
        coordinatorOfBatch = [:]
        itemCounts = [:]
        reattaching = [:]
    }

    private func send(_ message: Message) {
        channel.send([WireCodec.encode(message)])
    }
}
