import Foundation
import Messaging
import Wire

/// What happens to a submitted batch, in order: accepted, then one `itemFinished` per item, then `finished`.
public enum BatchEvent: Sendable {
    /// The coordinator took the batch and gave it an ID.
    case accepted(batchID: String, itemCount: Int)
    /// One item is done: its output image or its error.
    case itemFinished(ItemFinished)
    /// Every item is done.
    case finished(BatchFinished)
}

/// Why a client request did not succeed.
public enum ClusterClientError: Error, CustomStringConvertible, Equatable {
    /// Nothing answered at the endpoint in time.
    case noAnswer(endpoint: String, waited: Duration)
    /// The coordinator answered with a refusal.
    case refused(String)
    /// The client was closed while waiting.
    case closed
    /// The coordinator stopped answering while a batch was running.
    case lostContact(endpoint: String, batchID: String, waited: Duration)

    public var description: String {
        switch self {
        case .noAnswer(let endpoint, let waited):
            "no answer from a coordinator at \(endpoint) within \(waited). Is one running there? Start one with "
                + "`shiftwork coordinator --listen tcp://0.0.0.0:5570`, or point to it with --coordinator or "
                + "SHIFTWORK_COORDINATOR; `shiftwork run` needs no coordinator at all."
        case .refused(let reason):
            "the coordinator refused the request: \(reason)"
        case .closed:
            "the client was closed before the coordinator answered"
        case .lostContact(let endpoint, let batchID, let waited):
            "lost contact with the coordinator at \(endpoint): no answer for \(waited) while batch \(batchID) was running. "
                + "Check that it is still up; `shiftwork status \(batchID)` shows the batch once it is back."
        }
    }
}

/// A client of the coordinator: submits batches, asks for status, cancels.
///
/// One DEALER socket carries every request; a reader task routes each answer to whoever waits for it
/// (by request ID, then by batch ID).
public actor ClusterClient {
    private let endpoint: String
    private let channel: SocketChannel
    private let responseTimeout: Duration
    private var reader: Task<Void, Never>?
    private var pendingSubmissions: [String: AsyncThrowingStream<BatchEvent, any Error>.Continuation] = [:]
    private var batches: [String: AsyncThrowingStream<BatchEvent, any Error>.Continuation] = [:]
    private var pendingStatus: [String: CheckedContinuation<StatusReply, any Error>] = [:]
    private var isClosed = false
    /// One timer per submission awaiting acceptance; cancelled when the answer comes.
    private var acceptanceTimers: [String: Task<Void, Never>] = [:]
    private var watchdog: Task<Void, Never>?
    /// While a batch runs, the client asks the coordinator for its status this often, to notice a
    /// coordinator that went away instead of waiting for results forever.
    private let livenessInterval: Duration

    /// Connects to the coordinator at `endpoint`. ZeroMQ connects lazily: an absent coordinator shows as
    /// `ClusterClientError.noAnswer` on the first request, after `responseTimeout`.
    public init(
        endpoint: String, context: MessagingContext, responseTimeout: Duration = .seconds(10),
        socketOptions: SocketOptions = SocketOptions(), livenessInterval: Duration = .seconds(2)
    ) async throws {
        self.livenessInterval = livenessInterval
        var options = socketOptions
        options.lingerMilliseconds = min(options.lingerMilliseconds, 200)
        self.endpoint = endpoint
        self.responseTimeout = responseTimeout
        self.channel = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "client")
        let channel = self.channel
        self.reader = Task { await self.read(channel) }
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
        pendingSubmissions[requestID] = continuation
        send(.submitBatch(batch))
        let timeout = responseTimeout
        acceptanceTimers[requestID] = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self.expireSubmission(requestID)
        }
        return stream
    }

    /// Asks for the cluster's status, or one batch's with its items when `batchID` is given.
    public func status(batchID: String = "") async throws -> StatusReply {
        let requestID = UUID().uuidString
        let timeout = responseTimeout
        Task {
            try? await Task.sleep(for: timeout)
            self.expireStatus(requestID)
        }
        return try await withCheckedThrowingContinuation { continuation in
            pendingStatus[requestID] = continuation
            send(.statusRequest(StatusRequest(requestID: requestID, batchID: batchID)))
        }
    }

    /// Cancels a batch, or some of its items.
    public func cancel(batchID: String, itemIndexes: [UInt32] = []) {
        send(.cancelBatch(CancelBatch(batchID: batchID, itemIndexes: itemIndexes)))
    }

    /// Closes the socket; waiting requests fail with `ClusterClientError.closed`.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        await channel.close()
        reader?.cancel()
        watchdog?.cancel()
        for timer in acceptanceTimers.values { timer.cancel() }
        acceptanceTimers = [:]
        failEverything(ClusterClientError.closed)
    }

    // MARK: Routing answers

    private func read(_ channel: SocketChannel) async {
        for await received in channel.messageBatches {
            for frames in received {
                guard let payload = frames.last, let message = try? WireCodec.decode(payload) else { continue }
                route(message)
            }
        }
        failEverything(ClusterClientError.closed)
    }

    private func route(_ message: Message) {
        switch message {
        case .batchAccepted(let accepted):
            acceptanceTimers.removeValue(forKey: accepted.requestID)?.cancel()
            guard let continuation = pendingSubmissions.removeValue(forKey: accepted.requestID) else { return }
            batches[accepted.batchID] = continuation
            continuation.yield(.accepted(batchID: accepted.batchID, itemCount: Int(accepted.itemCount)))
            startWatchdog()
        case .itemFinished(let item):
            batches[item.batchID]?.yield(.itemFinished(item))
        case .itemsFinished(let items):
            for item in items { batches[item.batchID]?.yield(.itemFinished(item)) }
        case .batchFinished(let finished):
            guard let continuation = batches.removeValue(forKey: finished.batchID) else { return }
            continuation.yield(.finished(finished))
            continuation.finish()
        case .statusReply(let reply):
            pendingStatus.removeValue(forKey: reply.requestID)?.resume(returning: reply)
        case .refusal(let refusal):
            let error = ClusterClientError.refused(refusal.reason)
            if let continuation = pendingSubmissions.removeValue(forKey: refusal.requestID) {
                acceptanceTimers.removeValue(forKey: refusal.requestID)?.cancel()
                continuation.finish(throwing: error)
            } else if let continuation = pendingStatus.removeValue(forKey: refusal.requestID) {
                continuation.resume(throwing: error)
            } else if refusal.requestID.isEmpty {
                // A refusal of something without a request ID (a cancel, another protocol version): tell everyone.
                failEverything(error)
            }
        default:
            break
        }
    }

    /// Checks, while batches run, that the coordinator still answers; fails them if it does not.
    private func startWatchdog() {
        guard watchdog == nil else { return }
        watchdog = Task { [livenessInterval, responseTimeout, endpoint] in
            while !Task.isCancelled {
                try? await Task.sleep(for: livenessInterval)
                guard let batchID = self.anyRunningBatch() else { break }
                do {
                    _ = try await self.status(batchID: batchID)
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

    private func anyRunningBatch() -> String? { batches.keys.first }

    private func watchdogEnded() {
        watchdog = nil
        if !batches.isEmpty && !isClosed { startWatchdog() }
    }

    private func failRunningBatches(_ error: ClusterClientError) {
        for continuation in batches.values { continuation.finish(throwing: error) }
        batches = [:]
    }

    private func expireSubmission(_ requestID: String) {
        acceptanceTimers[requestID] = nil
        pendingSubmissions.removeValue(forKey: requestID)?
            .finish(throwing: ClusterClientError.noAnswer(endpoint: endpoint, waited: responseTimeout))
    }

    private func expireStatus(_ requestID: String) {
        pendingStatus.removeValue(forKey: requestID)?
            .resume(throwing: ClusterClientError.noAnswer(endpoint: endpoint, waited: responseTimeout))
    }

    private func failEverything(_ error: ClusterClientError) {
        for continuation in pendingSubmissions.values { continuation.finish(throwing: error) }
        for continuation in batches.values { continuation.finish(throwing: error) }
        for continuation in pendingStatus.values { continuation.resume(throwing: error) }
        pendingSubmissions = [:]
        batches = [:]
        pendingStatus = [:]
    }

    private func send(_ message: Message) {
        channel.send([WireCodec.encode(message)])
    }
}
