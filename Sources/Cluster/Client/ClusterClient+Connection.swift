import Messaging
import Wire

/// The tasks of a client's connection, all children of one task group (`run`): the reader of the socket,
/// the watcher of refused handshakes, a timer per request awaiting its answer, the watchdog while batches
/// run, and with several coordinators the connection watch. The scope that made the client owns the group:
/// `close()` ends its streams and the socket, and the group ends with them; nothing outlives the client.
extension ClusterClient {
    /// Work the client's actor asks its connection's task group to start.
    enum ConnectionWork: Sendable {
        /// Fail the requests whose deadline has passed, after this long (`ClientRequests.expire`).
        case expireRequests(after: Duration)
        /// Ask the coordinator for its status while batches run (`watch()`).
        case watch
        /// Ask the coordinator watch for its verdict now (a passive refusal came).
        case turnIfDue
    }

    /// The streams the connection's task group consumes, made with the client (the socket's callbacks post
    /// to them from its thread), finished by `close()`.
    struct ConnectionStreams: Sendable {
        let work: AsyncStream<ConnectionWork>.Continuation
        let works: AsyncStream<ConnectionWork>
        /// Refused handshakes (with CurveZMQ), as the socket's monitor reports them.
        let failures: AsyncStream<HandshakeFailure>
        let reportFailure: AsyncStream<HandshakeFailure>.Continuation?
        /// Connections live or lost (with several coordinators), tagged with their socket's generation.
        let connections: AsyncStream<(ConnectionEvent, Int)>
        let reportConnection: AsyncStream<(ConnectionEvent, Int)>.Continuation?

        init(usingKeys: Bool, watchesConnections: Bool) {
            (works, work) = AsyncStream<ConnectionWork>.makeStream()
            let (failures, reportFailure) = AsyncStream<HandshakeFailure>.makeStream()
            self.failures = failures
            self.reportFailure = usingKeys ? reportFailure : nil
            if !usingKeys { reportFailure.finish() }
            let (connections, reportConnection) = AsyncStream<(ConnectionEvent, Int)>.makeStream()
            self.connections = connections
            self.reportConnection = watchesConnections ? reportConnection : nil
            if !watchesConnections { reportConnection.finish() }
        }

        func finish() {
            work.finish()
            reportFailure?.finish()
            reportConnection?.finish()
        }
    }

    /// Opens a socket to `endpoint` whose monitor reports to `streams` (refused handshakes with CurveZMQ, a
    /// refused handshake being reported at once rather than retried silently until the response timeout;
    /// connection events with several coordinators).
    static func openChannel(
        to endpoint: String, context: MessagingContext, options: SocketOptions, streams: ConnectionStreams,
        generation: Int
    ) async throws -> SocketChannel {
        var onHandshakeFailure: (@Sendable (HandshakeFailure) -> Void)?
        if let report = streams.reportFailure { onHandshakeFailure = { report.yield($0) } }
        var onConnectionEvent: (@Sendable (ConnectionEvent) -> Void)?
        if let report = streams.reportConnection { onConnectionEvent = { report.yield(($0, generation)) } }
        return try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "client",
            onHandshakeFailure: onHandshakeFailure, onConnectionEvent: onConnectionEvent)
    }

    /// Runs `body` with `client` while its connection's task group runs beside it, then closes the client
    /// and waits for the group (and ends the client's own context): the scope of
    /// ``withConnection(to:responseTimeout:socketOptions:livenessInterval:silenceTimeout:onTurn:isolation:_:)``.
    static func run<Value>(
        _ client: ClusterClient, isolation: isolated (any Actor)? = #isolation,
        _ body: (ClusterClient) async throws -> Value
    ) async throws -> Value {
        let outcome = await withDiscardingTaskGroup(returning: Result<Value, any Error>.self) { group in
            group.addTask { await client.runConnection() }
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await body(client))
            } catch {
                outcome = .failure(error)
            }
            await client.close()
            return outcome
        }
        await client.releaseContext()
        return try outcome.get()
    }

    /// The connection's task group: runs until `close()` ends its streams and its socket.
    func runConnection() async {
        let streams = connectionStreams
        await withDiscardingTaskGroup { group in
            group.addTask { await self.read() }
            group.addTask { await self.uploads.serve { data in await self.send(.uploadData(data)) } }
            group.addTask {
                for await failure in streams.failures { await self.handshakeFailed(failure) }
            }
            if endpoints.canTurn {
                group.addTask {
                    for await (event, generation) in streams.connections {
                        await self.connectionChanged(event, generation: generation)
                    }
                }
                group.addTask { await self.watchCoordinator() }
            }
            for await item in streams.works {
                switch item {
                case .expireRequests(let delay):
                    group.addTask {
                        try? await Task.sleep(for: delay)
                        await self.expireRequests()
                    }
                case .watch:
                    group.addTask { await self.watch() }
                case .turnIfDue:
                    group.addTask { await self.turnIfDue() }
                }
            }
            group.cancelAll()
        }
    }

    /// Fails the requests still waiting `delay` from now, then (their deadline then passed).
    func expireRequests(after delay: Duration) {
        connectionWork.yield(.expireRequests(after: delay))
    }

    private func expireRequests() {
        guard !Task.isCancelled else { return }
        requests.expire(now: .now)
        unanswered = unanswered.filter { requests.isWaiting($0.key) }
    }

    /// Routes every answer the socket receives until it is closed, going on with the socket that replaced
    /// it when the client turned; then fails whatever still waits.
    private func read() async {
        var current = channel
        while true {
            // Messages of a socket the client turned away from are dropped unread.
            for await received in current.messageBatches where channel === current {
                for frames in received {
                    var position: WirePairPosition?
                    guard let payload = frames.last, let message = try? WireCodec.decode(payload, witnessed: &position)
                    else { continue }
                    witnessed.witness(position)
                    if let violation = MessageBounds.violation(inAnswer: message) {
                        // A count no coordinator sends (it would size the client's tables): the request it
                        // answers fails with why; an answer to no request is dropped.
                        route(
                            .refusal(
                                Refusal(
                                    requestID: Self.requestID(answeredBy: message), code: violation.code,
                                    reason: "the coordinator's answer was refused: \(violation.reason)")))
                        continue
                    }
                    route(message)
                }
            }
            guard !isClosed, channel !== current else { break }
            current = channel
        }
        requests.failAll(ClusterClientError.closed)
    }

    /// The request ID an answer carries; a made-up one (answering nothing) for messages without one.
    static func requestID(answeredBy message: Message) -> String {
        switch message {
        case .batchAccepted(let accepted): accepted.requestID
        case .retryAccepted(let accepted): accepted.requestID
        case .statusReply(let reply): reply.requestID
        case .cancelAccepted(let accepted): accepted.requestID
        case .refusal(let refusal): refusal.requestID
        default: "-"
        }
    }

    /// Starts the watchdog unless it runs.
    func startWatchdog() {
        guard !isWatching, !isClosed else { return }
        isWatching = true
        connectionWork.yield(.watch)
    }

    /// Checks, while batches run, that the coordinator still answers; fails them if it does not.
    private func watch() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: livenessInterval)
            guard !Task.isCancelled, let batchID = requests.anyRunningBatch else { break }
            do {
                let reply = try await status(batchID: batchID)
                noticeCoordinator(reply.coordinatorID)
            } catch ClusterClientError.noAnswer {
                requests.failRunningBatches(.lostContact(endpoint: endpoint, batchID: batchID, waited: responseTimeout))
                break
            } catch {
                break
            }
        }
        isWatching = false
        if requests.hasRunningBatches && !isClosed && !Task.isCancelled { startWatchdog() }
    }
}
