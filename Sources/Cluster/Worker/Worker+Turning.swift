import Logging
import Messaging
import Wire

/// A worker given several coordinators (a pair, docs/failover.md) turns to the next one, round-robin, when
/// its own is silent for `coordinatorSilenceTimeout`: it opens a socket to the next endpoint, closes the
/// old one and registers there (`WorkerHello`) as after a coordinator restart. A registered worker that
/// runs nothing hears nothing from a healthy coordinator, so while it is quiet it asks, once a heartbeat
/// interval, for the status of a batch no one has (`livenessProbeID`): any answer, a status or a refusal,
/// shows the coordinator is there. With one coordinator none of this runs: the worker behaves as it always
/// did (ZeroMQ reconnects by itself).
extension Worker {
    /// The request ID (and batch ID) of the liveness probe; its answers are taken as signs of life and dropped.
    static let livenessProbeID = "shiftwork-worker-liveness"

    /// The endpoint the worker is connected to.
    var currentCoordinator: String { configuration.coordinators.all[coordinatorIndex] }

    /// Opens the worker's socket to `endpoint`, with the worker's identity, keys and handshake watcher.
    func openChannel(to endpoint: String) async throws -> SocketChannel {
        lastHeardAt = .now
        return try await SocketChannel.open(
            context: context, kind: .dealer, options: connectionOptions, connect: [endpoint],
            name: "worker", onHandshakeFailure: onHandshakeFailure)
    }

    /// The socket that replaced `current` when the worker turned, to read from next; `nil` when the worker
    /// stops (the reader then ends).
    func channel(replacing current: SocketChannel) -> SocketChannel? {
        guard !isStopping, let channel, channel !== current else { return nil }
        return channel
    }

    /// Watches the coordinator's silence every heartbeat interval until cancelled or stopping: probes it
    /// when quiet, turns to the next one when silent for `coordinatorSilenceTimeout`.
    func watchCoordinator() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            guard !Task.isCancelled, !isStopping else { return }
            let quiet = ContinuousClock.now - lastHeardAt
            if quiet >= configuration.coordinatorSilenceTimeout {
                await turn(silentFor: quiet)
            } else if quiet >= heartbeatInterval {
                send(.statusRequest(StatusRequest(requestID: Self.livenessProbeID, batchID: Self.livenessProbeID)))
            }
        }
    }

    /// Connects to the next coordinator of the list and registers there. A socket that cannot be opened
    /// (a malformed endpoint) is logged and the worker stays where it is, to try again after the next silence.
    private func turn(silentFor quiet: Duration) async {
        guard !isStopping, let old = channel else { return }
        let (index, endpoint) = configuration.coordinators.next(after: coordinatorIndex)
        logger.warning("no answer from the coordinator: turning to the next one", metadata: [
            "from": "\(PrintableText.escape(currentCoordinator))", "to": "\(PrintableText.escape(endpoint))",
            "silent_for": "\(quiet)"])
        let replacement: SocketChannel
        do {
            replacement = try await openChannel(to: endpoint)
        } catch {
            logger.error("cannot connect to the next coordinator; staying with this one", metadata: [
                "coordinator": "\(PrintableText.escape(endpoint))", "error": "\(error)"])
            return
        }
        guard !isStopping else { return await replacement.close() }
        coordinatorIndex = index
        channel = replacement
        lastHeardAt = .now
        // The reader ends with the old socket and goes on with the new one (`channel(replacing:)`).
        await old.close()
        sayHello()
    }
}
