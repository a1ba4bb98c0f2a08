import Foundation
import Messaging
import Wire

/// A client of the coordinator: submits batches, attaches to them, asks for status, cancels.
///
/// A client exists within a scope: ``withConnection(to:responseTimeout:socketOptions:livenessInterval:silenceTimeout:onTurn:isolation:_:)``
/// connects, runs its body with the client, and closes the connection when the body ends, however it ends.
/// The reader, the response timers, the watchdog, the handshake watcher and (with several coordinators)
/// the connection watch are child tasks of one task group that the scope owns: nothing outlives it.
///
/// One DEALER socket carries every request; a reader routes each answer to whoever waits for it (by
/// request ID, then by batch ID; ``ClientRequests`` holds them). The socket has a stable identity, so that
/// a restarted coordinator (with a journal) streams a batch's remaining results to the client that
/// submitted it; when the client sees another coordinator instance answer, it re-attaches to its running
/// batches (``FetchResults``) and drops the items it already has.
///
/// Given several coordinators (a pair, docs/failover.md), the client turns to the next one when it has had
/// no live connection to its own for the silence timeout, or when its own refuses a request as passive
/// (`ClusterClient+Turning.swift`): it sends its unanswered requests there again and re-attaches to the
/// batches it follows, so that their items already received are not received (nor written) twice.
public actor ClusterClient {
    /// The coordinators, in the order the client turns through them.
    let endpoints: CoordinatorEndpoints
    /// Which of `endpoints` the socket is connected to.
    var endpointIndex = 0
    /// The endpoint the client is connected to.
    var endpoint: String { endpoints.all[endpointIndex] }
    /// The socket to the coordinator; replaced when the client turns.
    var channel: SocketChannel
    /// The context sockets are opened in (the client's own, or the caller's).
    let context: MessagingContext
    /// The client's own ZeroMQ context, ended by `close()`; `nil` when the caller's.
    private let ownedContext: MessagingContext?
    /// The options every socket of this client opens with (its identity among them: the same on each turn).
    let socketOptions: SocketOptions
    let responseTimeout: Duration
    private let maxMessageSize: Int64
    /// Everything waiting for an answer: requests, replies, followed batches, re-attachments.
    var requests = ClientRequests()
    /// The request messages not answered yet, by request ID: sent again to the next coordinator on a turn.
    /// Requests sent and not answered yet, by request ID: a turn sends them again (encoded then, with the
    /// witnessed position as it is then).
    var unanswered: [String: Message] = [:]
    /// The furthest journal position an active coordinator of a pair sent this client (this connection
    /// object), said back on every request (docs/failover.md, "The witnessed position").
    var witnessed = WitnessedPosition()
    var isClosed = false
    /// Whether the socket uses CurveZMQ (for the hints of `noAnswer`).
    let usingKeys: Bool
    /// Set once the coordinator refused the handshake: every request fails at once with it.
    var handshakeRefusal: ClusterClientError?
    /// Asks the connection's task group for a child task (a response timer, the watchdog).
    let connectionWork: AsyncStream<ConnectionWork>.Continuation
    /// What the connection's task group consumes: work, refused handshakes, connection events.
    let connectionStreams: ConnectionStreams
    /// Whether the watchdog runs (it ends by itself when no batch runs).
    var isWatching = false
    /// While a batch runs, the client asks the coordinator for its status this often, to notice a
    /// coordinator that went away instead of waiting for results forever.
    let livenessInterval: Duration
    /// The files this client uploads when the coordinator asks (`UploadRequest`, `ClientUploads`).
    let uploads = ClientUploads()
    /// With several coordinators: when to turn to the next one; `nil` with one.
    var watch: CoordinatorWatch?
    /// Counts the sockets opened (one per turn), to tell the current one's connection events.
    var connectionGeneration = 0
    /// Whether a turn to the next coordinator is under way (its socket opening).
    var isTurning = false
    /// Told of each turn (the CLI says it on stderr).
    let onTurn: (@Sendable (CoordinatorTurn) -> Void)?

    /// Connects to `endpoints` within `context`, or in a ZeroMQ context of its own (`context` `nil`),
    /// ended by `close()`. ZeroMQ connects lazily: an absent coordinator shows as
    /// `ClusterClientError.noAnswer` on the first request, after `responseTimeout` (with several
    /// coordinators, as a turn first). The connection's tasks run in ``run(_:isolation:_:)``.
    init(
        endpoints: CoordinatorEndpoints, context: MessagingContext?, responseTimeout: Duration,
        socketOptions: SocketOptions, livenessInterval: Duration, silenceTimeout: Duration,
        onTurn: (@Sendable (CoordinatorTurn) -> Void)?
    ) async throws {
        let ownContext = context == nil ? try MessagingContext() : nil
        guard let context = context ?? ownContext else { throw ClusterClientError.closed }
        self.context = context
        self.ownedContext = ownContext
        self.endpoints = endpoints
        self.livenessInterval = livenessInterval
        self.onTurn = onTurn
        var options = socketOptions
        options.lingerMilliseconds = min(options.lingerMilliseconds, 200)
        if options.identity == nil {
            options.identity = Array("client-\(UUID().uuidString.lowercased())".utf8)
        }
        if endpoints.canTurn {
            options = CoordinatorHeartbeats.applied(to: options)
            watch = CoordinatorWatch(
                endpointCount: endpoints.all.count, silenceTimeout: silenceTimeout, now: .now)
        }
        self.socketOptions = options
        self.responseTimeout = responseTimeout
        self.maxMessageSize = options.maxMessageSize
        self.usingKeys = options.curve != nil
        let streams = ConnectionStreams(usingKeys: options.curve != nil, watchesConnections: endpoints.canTurn)
        self.connectionStreams = streams
        self.connectionWork = streams.work
        do {
            self.channel = try await Self.openChannel(
                to: endpoints.first, context: context, options: options, streams: streams, generation: 0)
        } catch {
            streams.finish()
            await ownContext?.terminate()
            throw error
        }
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
        let message = Message.submitBatch(batch)
        let bytes = encoded(message)
        guard maxMessageSize < 0 || Int64(bytes.count) <= maxMessageSize else {
            continuation.finish(
                throwing: ClusterClientError.messageTooLarge(bytes: bytes.count, limit: maxMessageSize))
            return stream
        }
        awaitAcceptance(requestID, continuation, sending: message, encoded: bytes)
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
            sending: .fetchResults(FetchResults(requestID: requestID, batchID: batchID)))
        return stream
    }

    /// Sends a request answered by `BatchAccepted` or `RetryAccepted` (or a refusal), and fails its stream
    /// with `noAnswer` if neither comes within the response timeout; at once after a refused handshake.
    func awaitAcceptance(
        _ requestID: String, _ continuation: AsyncThrowingStream<BatchEvent, any Error>.Continuation,
        sending message: Message, encoded bytes: [UInt8]? = nil
    ) {
        if let handshakeRefusal { return continuation.finish(throwing: handshakeRefusal) }
        if isClosed { return continuation.finish(throwing: ClusterClientError.closed) }
        requests.awaitAcceptance(
            requestID, continuation, deadline: .now + responseTimeout,
            expired: .noAnswer(endpoint: endpoint, waited: responseTimeout, usingKeys: usingKeys))
        sendRequest(requestID, message, encoded: bytes)
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
            sendRequest(requestID, message(requestID))
            expireRequests(after: responseTimeout)
        }
    }

    /// Closes the socket (and ends its own ZeroMQ context); waiting requests fail with
    /// `ClusterClientError.closed`, and so does every later request. The scope
    /// (``withConnection(to:responseTimeout:socketOptions:livenessInterval:silenceTimeout:onTurn:isolation:_:)``)
    /// calls it when its body ends; calling it sooner ends the connection sooner. Idempotent.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        // Waiting requests fail first: the watchdog may be waiting for a status reply.
        requests.failAll(ClusterClientError.closed)
        unanswered = [:]
        // The connection's task group ends when its streams end and the reader has seen the socket close.
        connectionStreams.finish()
        uploads.finish()
        await channel.close()
    }

    /// Ends the client's own ZeroMQ context, once the connection's task group has ended.
    func releaseContext() async {
        await ownedContext?.terminate()
    }

    func send(_ message: Message) {
        channel.send([encoded(message)])
    }

    /// The bytes of `message` to the coordinator, with the witnessed position when there is one.
    func encoded(_ message: Message) -> [UInt8] {
        WireCodec.encode(message, witnessed: witnessed.wire)
    }

    /// Sends the request `message` (`bytes`: already encoded), remembered until answered so that a turn sends
    /// it again.
    func sendRequest(_ requestID: String, _ message: Message, encoded bytes: [UInt8]? = nil) {
        if endpoints.canTurn { unanswered[requestID] = message }
        channel.send([bytes ?? encoded(message)])
    }
}
