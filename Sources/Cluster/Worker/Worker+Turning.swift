import Logging
import Messaging
import Wire

/// A worker given several coordinators (a pair, docs/failover.md) turns to the next one, round-robin, when
/// its `CoordinatorWatch` says so: no live connection to its coordinator for `coordinatorSilenceTimeout`
/// (the socket monitor's connection events; ZMTP heartbeats, answered by the coordinator's libzmq, end a
/// connection to a dead host), or its hello refused as passive. It opens a socket to the next endpoint,
/// closes the old one and registers there (`WorkerHello`) as after a coordinator restart. It sends the
/// coordinator nothing to learn whether it is there. With one coordinator none of this runs: the worker
/// behaves as it always did (ZeroMQ reconnects by itself).
extension Worker {
    /// How often the watch is asked for its verdict (no traffic: a look at a value).
    static let watchTick: Duration = .milliseconds(250)

    /// The endpoint the worker is connected to.
    var currentCoordinator: String { configuration.coordinators.all[coordinatorIndex] }

    /// Opens the worker's socket to `endpoint`, with the worker's identity, keys and handshake watcher; with
    /// several coordinators, with ZMTP heartbeats and its connection events posted to the inbox, tagged
    /// with the socket's generation (events of a socket the worker turned away from are ignored).
    func openChannel(to endpoint: String) async throws -> SocketChannel {
        connectionGeneration += 1
        var onConnectionEvent: (@Sendable (ConnectionEvent) -> Void)?
        var options = connectionOptions
        if configuration.coordinators.canTurn {
            options = CoordinatorHeartbeats.applied(to: options)
            let generation = connectionGeneration
            onConnectionEvent = { [inbox] event in inbox.yield(.connection(event, generation: generation)) }
        }
        return try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint],
            name: "worker", onHandshakeFailure: onHandshakeFailure, onConnectionEvent: onConnectionEvent)
    }

    /// The socket that replaced `current` when the worker turned, to read from next; `nil` when the worker
    /// stops (the reader then ends).
    func channel(replacing current: SocketChannel) -> SocketChannel? {
        guard !isStopping, let channel, channel !== current else { return nil }
        return channel
    }

    /// The socket monitor saw the connection of socket `generation` become live or end.
    func connectionChanged(_ event: ConnectionEvent, generation: Int) {
        guard generation == connectionGeneration else { return }
        watch?.connection(event, now: .now)
    }

    /// The coordinator refused this worker as the passive one of its pair: turn now (or after the
    /// back-off when every coordinator said so). A worker that knows no other coordinator stops, as on
    /// any refusal, saying to give it both.
    func refusedAsPassive(_ refusal: Refusal) throws {
        guard watch != nil else {
            logger.error(
                "the coordinator is the passive one of a pair and this worker knows no other: give it both (--coordinator A,B)",
                metadata: ["reason": "\(PrintableText.escape(refusal.reason))"])
            throw WorkerError.refused(
                "\(PrintableText.escape(refusal.reason)) (the coordinator is the passive one of a pair: give the worker both, --coordinator A,B)"
            )
        }
        // Refusals of the socket being turned away from (read while the next one opens) count for nothing.
        guard !isTurning else { return }
        watch?.refusedAsPassive(now: .now)
        inbox.yield(.turnDue)
    }

    /// Asks the watch every `watchTick` until cancelled or stopping, and turns when it says so.
    func watchCoordinator() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.watchTick)
            guard !Task.isCancelled, !isStopping else { return }
            await turnIfDue()
        }
    }

    /// Turns when the watch says so, unless a turn is under way (one at a time: the watch's tick and the
    /// inbox may both ask while the next socket opens).
    func turnIfDue() async {
        guard !isTurning, let watch, case .turn(let reason) = watch.verdict(now: .now) else { return }
        isTurning = true
        defer { isTurning = false }
        await turn(because: reason)
    }

    /// Connects to the next coordinator of the list and registers there. A socket that cannot be opened (a
    /// malformed endpoint, a name that no longer resolves: a pod that is gone) is logged and the worker stays
    /// where it is and, after a heartbeat interval, registers there again: the coordinator it is still
    /// connected to may have taken over meanwhile (a passive one whose peer died), and a dead next endpoint
    /// must never leave the worker unregistered.
    private func turn(because reason: CoordinatorWatch.Reason) async {
        guard !isStopping, let old = channel else { return }
        let (index, endpoint) = configuration.coordinators.next(after: coordinatorIndex)
        logger.warning(
            "turning to the next coordinator",
            metadata: [
                "from": "\(PrintableText.escape(currentCoordinator))", "to": "\(PrintableText.escape(endpoint))",
                "reason": "\(reason)",
            ])
        watch?.turned(now: .now)
        let replacement: SocketChannel
        do {
            replacement = try await openChannel(to: endpoint)
        } catch {
            logger.error(
                "cannot connect to the next coordinator; staying with this one",
                metadata: [
                    "coordinator": "\(PrintableText.escape(endpoint))", "error": "\(error)",
                ])
            try? await Task.sleep(for: heartbeatInterval)
            if !isStopping, channel === old { sayHello() }
            return
        }
        guard !isStopping else { return await replacement.close() }
        coordinatorIndex = index
        channel = replacement
        sayHello()  // first on the new socket, before any heartbeat
        // The reader ends with the old socket and goes on with the new one (`channel(replacing:)`).
        await old.close()
    }
}
