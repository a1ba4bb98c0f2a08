import Foundation
import Messaging
import Wire

/// A client given several coordinators (a pair, docs/failover.md) turns to the next one, round-robin, when
/// its `CoordinatorWatch` says so: no live connection to its coordinator for the silence timeout (the
/// socket monitor's events; ZMTP heartbeats, answered by the coordinator's libzmq, end a connection to a
/// dead host), or a request refused as passive. It opens a socket to the next endpoint with the same
/// identity, closes the old one, sends its unanswered requests again (each with a new response timeout)
/// and re-attaches to the batches it follows by their IDs (``FetchResults``): items received already are
/// dropped on arrival, so an output is never written twice. It asks the coordinator nothing to learn
/// whether it is there. With one coordinator none of this runs.
extension ClusterClient {
    /// How often the watch is asked for its verdict (no traffic: a look at a value).
    static let watchTick: Duration = .milliseconds(250)

    /// The socket monitor saw the connection of socket `generation` become live or end.
    func connectionChanged(_ event: ConnectionEvent, generation: Int) {
        guard generation == connectionGeneration else { return }
        watch?.connection(event, now: .now)
    }

    /// Asks the watch every `watchTick` until cancelled or closed, and turns when it says so.
    func watchCoordinator() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.watchTick)
            guard !Task.isCancelled, !isClosed else { return }
            await turnIfDue()
        }
    }

    /// A request was refused as passive: with another coordinator to turn to, the request stays unanswered
    /// (it goes to the next coordinator) and the turn comes at once, or after the back-off when every
    /// coordinator said so. Returns false with one coordinator: the refusal then fails the request.
    func refusedAsPassive() -> Bool {
        guard watch != nil else { return false }
        // Refusals of the socket being turned away from (read while the next one opens) count for nothing:
        // their requests go to the next coordinator all the same.
        guard !isTurning else { return true }
        watch?.refusedAsPassive(now: .now)
        connectionWork.yield(.turnIfDue)  // at once, not at the watch's next tick
        return true
    }

    /// Turns when the watch says so, unless a turn is under way (one at a time: the watch's tick and a
    /// passive refusal may both ask while the next socket opens).
    func turnIfDue() async {
        guard !isTurning, let watch, case .turn(let reason) = watch.verdict(now: .now) else { return }
        isTurning = true
        defer { isTurning = false }
        await turn(because: reason)
    }

    /// Connects to the next coordinator of the list, sends the unanswered requests there and re-attaches
    /// to the followed batches. When the socket cannot be opened (a name that no longer resolves), the
    /// client stays where it is and, after a pause, sends its unanswered requests there again: that
    /// coordinator may have taken over meanwhile (a passive one whose peer died).
    private func turn(because reason: CoordinatorWatch.Reason) async {
        guard !isClosed else { return }
        let (index, next) = endpoints.next(after: endpointIndex)
        let from = endpoint
        watch?.turned(now: .now)
        connectionGeneration += 1
        let replacement: SocketChannel
        do {
            replacement = try await Self.openChannel(
                to: next, context: context, options: socketOptions, streams: connectionStreams,
                generation: connectionGeneration)
        } catch {
            try? await Task.sleep(for: ClusterDefaults.heartbeatInterval)
            guard !isClosed else { return }
            unanswered = unanswered.filter { requests.isWaiting($0.key) }
            for (_, message) in unanswered { channel.send([encoded(message)]) }
            return
        }
        guard !isClosed else { return await replacement.close() }
        let old = channel
        endpointIndex = index
        channel = replacement
        onTurn?(CoordinatorTurn(from: from, to: next, reason: reason))
        // Before anything else suspends: a request made from now on goes to the new socket once, not twice.
        let deadline = ContinuousClock.now + responseTimeout
        unanswered = unanswered.filter { requests.isWaiting($0.key) }
        for (requestID, message) in unanswered {
            requests.renew(requestID, deadline: deadline)
            channel.send([encoded(message)])
        }
        for request in requests.reattachEverything(newRequestID: { UUID().uuidString }) {
            send(.fetchResults(FetchResults(requestID: request.requestID, batchID: request.batchID)))
        }
        if !unanswered.isEmpty { expireRequests(after: responseTimeout) }
        // The reader ends with the old socket and goes on with the new one.
        await old.close()
    }
}

/// A client turned from one coordinator of its list to the next (`ClusterClient`'s `onTurn`).
public struct CoordinatorTurn: Sendable, Equatable, CustomStringConvertible {
    /// The coordinator turned away from.
    public let from: String
    /// The coordinator turned to.
    public let to: String
    /// Why.
    public let reason: CoordinatorWatch.Reason

    public var description: String {
        "turning from the coordinator at \(PrintableText.escape(from)) to \(PrintableText.escape(to)): \(reason)"
    }
}
