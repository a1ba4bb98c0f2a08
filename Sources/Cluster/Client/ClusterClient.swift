import Foundation
import Messaging
import Wire

/// A client of the coordinator: submits batches, attaches to them, asks for status, cancels.
///
/// One DEALER socket carries every request; a reader routes each answer to whoever waits for it (by
/// request ID, then by batch ID; ``ClientRequests`` holds them). The reader, the response timers, the
/// watchdog and the handshake watcher are child tasks of one task group that lives as long as the
/// connection (`init` to `close()`). The socket has a stable identity, so that a restarted coordinator
/// (with a journal) streams a batch's remaining results to the client that submitted it; when the
/// client sees another coordinator instance answer, it re-attaches to its running batches
/// (``FetchResults``) and drops the items it already has.
public actor ClusterClient {
    let endpoint: String
    let channel: SocketChannel
    /// The client's own ZeroMQ context, ended by `close()`; `nil` when the caller's.
    private let ownedContext: MessagingContext?
    let responseTimeout: Duration
    private let maxMessageSize: Int64
    /// Everything waiting for an answer: requests, replies, followed batches, re-attachments.
    var requests = ClientRequests()
    var isClosed = false
    /// Whether the socket uses CurveZMQ (for the hints of `noAnswer`).
    let usingKeys: Bool
    /// Set once the coordinator refused the handshake: every request fails at once with it.
    var handshakeRefusal: ClusterClientError?
    /// Asks the connection's task group for a child task (a response timer, the watchdog).
    let connectionWork: AsyncStream<ConnectionWork>.Continuation
    /// The connection's task group (`runConnection`): the one task the client starts unstructured, since
    /// the connection lives from `init` to `close()`, which cancels it and waits for it and every child.
    private var connection: Task<Void, Never>?
    /// Whether the watchdog runs (it ends by itself when no batch runs).
    var isWatching = false
    /// While a batch runs, the client asks the coordinator for its status this often, to notice a
    /// coordinator that went away instead of waiting for results forever.
    let livenessInterval: Duration
    /// The files this client uploads when the coordinator asks (`UploadRequest`, `ClientUploads`).
    let uploads = ClientUploads()

    /// Connects to the coordinator at `endpoint`, with a ZeroMQ context of its own that `close()` ends.
    /// ZeroMQ connects lazily: an absent coordinator shows as `ClusterClientError.noAnswer` on the first
    /// request, after `responseTimeout`.
    public init(
        endpoint: String, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2)
    ) async throws {
        let context = try MessagingContext()
        do {
            try await self.init(
                endpoint: endpoint, context: context, ownsContext: true, responseTimeout: responseTimeout,
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
        try await self.init(
            endpoint: endpoint, context: context, ownsContext: false, responseTimeout: responseTimeout,
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
        let (work, connectionWork) = AsyncStream<ConnectionWork>.makeStream()
        self.connectionWork = connectionWork
        if options.curve == nil { reportFailure.finish() }
        self.connection = Task { await self.runConnection(work: work, handshakeFailures: failures) }
    }

    /// A refused handshake (not a connection reset) fails everything pending, and every later request.
    func handshakeFailed(_ failure: HandshakeFailure) {
        if case .unspecified = failure.reason { return }  // e.g. the connection broke mid-handshake: retried
        let error = ClusterClientError.notAuthorized(endpoint: endpoint, failure: failure)
        handshakeRefusal = error
        requests.failAll(error)
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
            continuation.finish(
                throwing: ClusterClientError.messageTooLarge(bytes: message.count, limit: maxMessageSize))
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
        awaitAcceptance(
            requestID, continuation,
            sending: WireCodec.encode(.fetchResults(FetchResults(requestID: requestID, batchID: batchID))))
        return stream
    }

    /// Sends a request answered by `BatchAccepted` or `RetryAccepted` (or a refusal), and fails its stream
    /// with `noAnswer` if neither comes within the response timeout; at once after a refused handshake.
    func awaitAcceptance(
        _ requestID: String, _ continuation: AsyncThrowingStream<BatchEvent, any Error>.Continuation,
        sending message: [UInt8]
    ) {
        if let handshakeRefusal { return continuation.finish(throwing: handshakeRefusal) }
        if isClosed { return continuation.finish(throwing: ClusterClientError.closed) }
        requests.awaitAcceptance(
            requestID, continuation, deadline: .now + responseTimeout,
            expired: .noAnswer(endpoint: endpoint, waited: responseTimeout, usingKeys: usingKeys))
        channel.send([message])
        expireRequests(after: responseTimeout)
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
        if isClosed { throw ClusterClientError.closed }
        let requestID = UUID().uuidString
        return try await withCheckedThrowingContinuation { continuation in
            requests.awaitReply(requestID, pending(continuation), deadline: .now + responseTimeout, expired: expired)
            send(message(requestID))
            expireRequests(after: responseTimeout)
        }
    }

    /// Closes the socket (and ends its own ZeroMQ context); waiting requests fail with
    /// `ClusterClientError.closed`.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        // Waiting requests fail first: the watchdog may be waiting for a status reply.
        requests.failAll(ClusterClientError.closed)
        connectionWork.finish()
        connection?.cancel()
        await channel.close()
        await connection?.value
        connection = nil
        await ownedContext?.terminate()
    }

    func send(_ message: Message) {
        channel.send([WireCodec.encode(message)])
    }
}
