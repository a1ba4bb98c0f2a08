import Messaging
import Wire

/// The tasks of a client's connection, all children of one task group (`runConnection`): the reader of
/// the socket, the watcher of refused handshakes, a timer per request awaiting its answer, and the
/// watchdog while batches run. `close()` cancels the group and waits for it: nothing outlives the client.
extension ClusterClient {
    /// Work the client's actor asks its connection's task group to start.
    enum ConnectionWork: Sendable {
        /// Fail the requests whose deadline has passed, after this long (`ClientRequests.expire`).
        case expireRequests(after: Duration)
        /// Ask the coordinator for its status while batches run (`watch()`).
        case watch
    }

    /// The connection's task group: runs until `close()` ends `work` and cancels it.
    func runConnection(work: AsyncStream<ConnectionWork>, handshakeFailures: AsyncStream<HandshakeFailure>) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.read() }
            group.addTask {
                for await failure in handshakeFailures { await self.handshakeFailed(failure) }
            }
            for await item in work {
                switch item {
                case .expireRequests(let delay):
                    group.addTask {
                        try? await Task.sleep(for: delay)
                        await self.expireRequests()
                    }
                case .watch:
                    group.addTask { await self.watch() }
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
    }

    /// Routes every answer the socket receives until it is closed; then fails whatever still waits.
    private func read() async {
        for await received in channel.messageBatches {
            for frames in received {
                guard let payload = frames.last, let message = try? WireCodec.decode(payload) else { continue }
                if let violation = MessageBounds.violation(inAnswer: message) {
                    // A count no coordinator sends (it would size the client's tables): the request it answers
                    // fails with why; an answer to no request is dropped.
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
        requests.failAll(ClusterClientError.closed)
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
