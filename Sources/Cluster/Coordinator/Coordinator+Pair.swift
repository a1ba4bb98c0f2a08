import Foundation
import Logging
import Messaging
import Wire

/// The actor's half of a pair of coordinators (`--ha`, docs/failover.md): it carries out what the values
/// decide. `CoordinatorPair` (the rules) hears the peer's announcements, requests and time; the active one's
/// journal goes to the peer through `ReplicationSender`, the passive one applies it through
/// `ReplicationReceiver`; acknowledgements wait in `AcknowledgementGate` while the peer is in step.
extension Coordinator {
    /// The keys the ZAP handler admits for the pair's link alone: the peer's (by default this coordinator's
    /// own, for a pair that shares its key pair).
    var pairKeys: Set<CurvePublicKey> {
        guard let pair = configuration.pair, let authentication = configuration.authentication else { return [] }
        return [pair.peerKey ?? authentication.keyPair.publicKey]
    }

    /// Opens the link and starts as a coordinator of a pair: nothing is served (clients and workers are
    /// refused with `REFUSAL_CODE_PASSIVE`) until the rules make it active.
    func startPair(_ pair: PairConfiguration, recovered: RecoveredState, serviceEndpoint: String) async throws {
        guard let journal else {
            throw JournalFile.Failure(
                description: "--ha needs --data-dir: each coordinator of a pair keeps its own journal")
        }
        _ = journal.takeOpenedRecords()  // read again when it becomes active
        let link: PairLink
        do {
            link = try await PairLink.open(
                context: context, configuration: pair, keyPair: configuration.authentication?.keyPair,
                maxMessageSize: configuration.socketOptions.maxMessageSize)
        } catch {
            throw JournalFile.Failure(
                description: "cannot listen for the pair's peer on \(pair.listen) (--ha-listen): \(error)")
        }
        pairing = PairSession(
            configuration: pair,
            rules: CoordinatorPair(
                role: pair.role, failoverTimeout: pair.failoverTimeout, history: recovered.history,
                position: journal.position, now: .now),
            receiver: ReplicationReceiver(held: journal.position), link: link, serviceEndpoint: serviceEndpoint)
        logger.notice(
            "coordinator of a pair starting",
            metadata: [
                "role": "\(pair.role.rawValue)", "ha_listen": "\(link.boundEndpoint ?? pair.listen)",
                "ha_peer": "\(pair.peer)", "journal": "\(journal.position)", "history": "\(recovered.history.rawValue)",
                "failover_timeout": "\(pair.failoverTimeout)",
            ])
        announce()
    }

    /// Hands the peer's messages to the pair's rules until the link closes (`stopPair`); `run()` reads it in
    /// its task group. Returns at once for a coordinator that runs alone.
    func readPairLink() async {
        guard let link = pairing?.link else { return }
        for await received in link.received {
            pairReceived(received)
        }
    }

    /// Closes the link.
    func stopPair() async {
        guard let link = pairing?.link else { return }
        pairing = nil
        await link.close()
    }

    // MARK: - The link

    /// Messages from the peer (`[identity, envelope]` each), in order.
    private func pairReceived(_ received: [[[UInt8]]]) {
        guard pairing != nil else { return }
        sendingTogether {
            for frames in received {
                guard frames.count == 2 else {
                    droppedMessages += 1
                    continue
                }
                let message: Message
                do throws(WireError) {
                    message = try WireCodec.decode(frames[1])
                } catch {
                    // A peer of another major version says so in its envelope: refused as such, not dropped unsaid.
                    if let problem = PairConfiguration.problem(decoding: error) {
                        refusePeer(problem)
                    } else {
                        droppedMessages += 1
                    }
                    continue
                }
                pairMessage(message)
            }
        }
    }

    private func pairMessage(_ message: Message) {
        switch message {
        case .pairAnnouncement(let announcement): peerAnnounced(announcement)
        case .pairHeld(let held): peerHolds(held)
        case .pairJournal(let records): applyStream(records)
        case .pairSnapshot(let snapshot): applySnapshot(snapshot)
        case .pairResultFile(let file): applyResultFile(file)
        default: droppedMessages += 1
        }
    }

    private func peerAnnounced(_ wire: WirePairAnnouncement) {
        guard var session = pairing else { return }
        if let problem = session.configuration.problem(with: wire) { return refusePeer(problem) }
        guard let announcement = PairAnnouncement(wire) else { return }
        session.peerHello = wire.hello
        session.fault = nil  // said again below if the rules still find one (`misconfigured`)
        pairing = session
        syncActivePosition()
        carryOut(pairing?.rules.handle(.peerAnnounced(announcement), now: .now) ?? [])
        // Active, with a peer that follows: its stream starts where it holds (a starting peer settles first:
        // until it is passive it may yet lead, and it is not in step).
        guard pairing?.rules.state == .active, announcement.state == .passive else { return }
        if pairing?.sender?.isStreaming == false {
            sendStream(senderHears(announcement.position, gap: false))
        }
        noteIfPeerCaughtUp()
    }

    /// A peer refused (another cluster, another major version, another pair version): counted, said (once in a
    /// while), kept as the pair's fault; nothing of it reaches the rules or the journal.
    private func refusePeer(_ problem: String) {
        guard var session = pairing else { return }
        session.refusedAnnouncements += 1
        session.fault = "refused the pair's peer: \(problem)"
        pairing = session
        if logThrottle.admit("refused the pair's peer", now: .now) {
            logger.error("refused the pair's peer: \(problem)", metadata: ["peer": "\(session.configuration.peer)"])
        }
    }

    /// Tells the rules once the peer holds the whole journal (`peerCaughtUp`: acknowledgements wait for it).
    private func noteIfPeerCaughtUp() {
        guard let session = pairing, session.rules.state == .active, session.rules.peer?.state == .passive,
            session.sender?.peerCaughtUp == true, session.rules.history != .activeWithPeer
        else { return }
        carryOut(pairing?.rules.handle(.peerCaughtUp, now: .now) ?? [])
    }

    private func peerHolds(_ held: WirePairHeld) {
        guard pairing?.rules.state == .active, pairing?.sender?.isStreaming != nil else { return }
        let position = JournalPosition(held.held)
        let outputs = senderHears(position, gap: held.gap)
        if held.rejected {
            logger.warning("the passive coordinator refused part of the journal stream; sending it again")
        }
        // In place (`pairing?.…`): a copy of the session would copy the gate's queue and the sender's tail.
        let released = pairing?.gate.peerHolds(position) ?? []
        let holdsAll = pairing?.sender.map { sender in sender.peerHeld.map { $0 >= sender.written } == true }
        // Read before the assignment: the right side of `pairing?.x = …` runs inside the access to `pairing`.
        let behindSince = holdsAll == true ? nil : (pairing?.behindSince ?? .now)
        pairing?.behindSince = behindSince
        deliver(released)
        sendStream(outputs)
        noteIfPeerCaughtUp()
    }

    /// The sender hears how far the peer holds; returns what to send it. Every record written is the
    /// sender's first: a snapshot reads the journal file, which must not hold records the sender has not seen.
    private func senderHears(_ held: JournalPosition, gap: Bool) -> [ReplicationSender.Output] {
        streamJournal()
        let journal = journal
        let outputs = pairing?.sender?.peerHolds(held, gap: gap, journal: { journal?.readRecords() }) ?? []
        if let problem = pairing?.sender?.snapshotProblem, logThrottle.admit("pair snapshot", now: .now) {
            logger.error("could not send the passive coordinator a snapshot: \(problem)")
        }
        return outputs
    }

    /// Every heartbeat: the rules' timer, the announcement, a peer gone.
    func pairTick() {
        guard let session = pairing else { return }
        syncActivePosition()
        let now = ContinuousClock.now
        carryOut(pairing?.rules.handle(.tick, now: now) ?? [])
        if session.rules.peerIsGone(now: now), session.sender?.isStreaming == true {
            pairing?.sender?.peerLost()  // it starts again from where the peer says it holds
        }
        announce()
    }

    /// An active coordinator's rules compare (and announce) its journal as it is now: the journal moves with
    /// every record, the rules' copy only here (a passive one's moves as it applies the stream).
    private func syncActivePosition() {
        guard pairing?.rules.state == .active, let position = journal?.position else { return }
        pairing?.rules.position = position
    }

    private func announce() {
        syncActivePosition()
        guard let session = pairing else { return }
        session.link.announce(
            .pairAnnouncement(
                session.rules.announcement.wire(hello: session.hello(coordinatorID: dispatcher.coordinatorID))))
    }

    // MARK: - Active: the stream and the gate

    /// The witnessed position the active coordinator of a pair sets on what it sends now (docs/failover.md,
    /// "The witnessed position"): while acknowledgements wait for the peer, how far the peer holds the journal
    /// (everything the gate released follows a record the peer holds, so the other coordinator is never behind
    /// it); going on alone, the journal's own position (the other coordinator lacks what follows its last
    /// answer). `nil` when it is not active.
    func witnessedStamp() -> WirePairPosition? {
        guard let session = pairing, session.rules.state == .active else { return nil }
        if session.gate.isHolding { return session.gate.held.wire }
        return journal?.position.wire
    }

    /// What the gate lets through of `outbound` now (all of it unless the peer is in step). Messages only
    /// workers receive never wait (`acknowledgesNothing`): a worker's pipeline does not stall for the peer's
    /// answer, and each peer's messages keep their order (a peer is a worker or a client, never both).
    func gated(_ outbound: [Outbound], following: JournalPosition?) -> [Outbound] {
        guard pairing?.gate.isHolding == true else { return outbound }
        // Most sends are tasks for workers only: they go as they are, without a copy of each message.
        guard outbound.contains(where: { !Self.acknowledgesNothing($0.message) }) else { return outbound }
        var toWorkers: [Outbound] = []
        var acknowledging: [Outbound] = []
        for message in outbound {
            if Self.acknowledgesNothing(message.message) {
                toWorkers.append(message)
            } else {
                acknowledging.append(message)
            }
        }
        guard !acknowledging.isEmpty else { return toWorkers }
        let released = pairing?.gate.submit(acknowledging, to: \.peer, following: following, now: .now) ?? acknowledging
        return toWorkers + released
    }

    /// Whether `message` tells its receiver nothing the journal holds: a task to run, to stop or to give back,
    /// a welcome (only workers receive these). If the active coordinator dies before its peer holds the record
    /// that came before, the other one sends what it decides instead: a task runs twice at worst, and its
    /// result counts once. What a client is told (accepted, finished, cancelled, retried) always waits.
    static func acknowledgesNothing(_ message: Message) -> Bool {
        switch message {
        case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .giveBackTask: true
        default: false
        }
    }

    /// Sends the peer what the journal wrote since last time.
    func streamJournal() {
        guard pairing?.sender != nil, let journal else { return }
        let written = journal.takeWritten()
        guard !written.isEmpty else { return }
        let outputs = pairing?.sender?.append(contentsOf: written) ?? []
        if pairing?.behindSince == nil, pairing?.gate.isHolding == true { pairing?.behindSince = .now }
        sendStream(outputs)
    }

    private func sendStream(_ outputs: [ReplicationSender.Output]) {
        guard let session = pairing, !outputs.isEmpty else { return }
        var messages: [Message] = []
        for output in outputs {
            switch output {
            case .snapshotStart:
                logger.info("sending the passive coordinator the whole journal (it holds no point of this one's)")
                messages.append(.pairSnapshot(WirePairSnapshot(end: false, reaches: nil)))
                for file in journal?.storedResultFiles() ?? [] {
                    if let message = resultFileMessage(batchID: file.batchID, itemIndex: file.itemIndex) {
                        messages.append(message)
                    }
                }
            case .resultFile(let batchID, let itemIndex):
                if let message = resultFileMessage(batchID: batchID, itemIndex: itemIndex) { messages.append(message) }
            case .frames(let from, let reaches, let frames, let count, let snapshot):
                messages.append(
                    .pairJournal(
                        WirePairJournal(
                            from: from.wire, reaches: reaches.wire, frames: frames, records: UInt32(count),
                            snapshot: snapshot)))
            case .snapshotEnd(let reaches):
                messages.append(.pairSnapshot(WirePairSnapshot(end: true, reaches: reaches.wire)))
            }
        }
        session.link.send(messages)
    }

    private func resultFileMessage(batchID: String, itemIndex: UInt32) -> Message? {
        guard let data = try? journal?.storedOutput(batchID: batchID, itemIndex: itemIndex), !data.isEmpty else {
            return nil  // retired since, or an output without bytes
        }
        return .pairResultFile(
            WirePairResultFile(batchID: batchID, itemIndex: itemIndex, data: data, crc32: CRC32.checksum(data)))
    }

    // MARK: - Requests and the rules' effects

    /// Whether a client's or worker's `message` is served here: while active, unless its witnessed position is
    /// beyond this coordinator's journal (the rules then decide: a plausible one makes it step down); otherwise
    /// the rules decide (a takeover, then it is served) or it is refused with `REFUSAL_CODE_PASSIVE`.
    func pairAdmits(
        _ message: Message, witnessed wire: WirePairPosition?, from sender: MessageSender,
        now: ContinuousClock.Instant
    ) -> Bool {
        guard configuration.pair != nil else { return true }
        guard let session = pairing else {
            // Still opening the pair's link.
            deliver([
                Outbound(
                    peer: sender.identity,
                    message: .refusal(
                        Refusal(
                            requestID: Self.requestID(of: message), code: .passive,
                            reason: "this coordinator of a pair is starting: turn to the other coordinator")))
            ])
            return false
        }
        let witnessed = JournalPosition(wire)
        if session.rules.state == .active {
            guard wire != nil, let position = journal?.position, witnessed > position else { return true }
            pairing?.rules.position = position  // the rules compare with the journal as it is now
        }
        // A status request asks; it does not turn to this coordinator, so it never counts toward a takeover: a
        // health check or an operator's `status` on the passive one must not make it active while only its link
        // to the active one is cut (docs/deployment.md, "The coordinator pair: failover in operation").
        let asksOnly: Bool
        if case .statusRequest = message { asksOnly = true } else { asksOnly = false }
        if asksOnly, session.rules.state == .active { return true }
        let effects = asksOnly ? [] : (pairing?.rules.handle(.request(witnessed: witnessed), now: now) ?? [])
        if carryOut(effects, from: sender) { return true }
        // Said at notice level where it mattered (a takeover it stopped, or a step-down): it is what keeps an
        // acknowledgement from being lost (docs/failover.md). A passive one that hears its active peer refuses anyway.
        let ignored = effects.contains { if case .implausibleWitness = $0 { true } else { false } }
        if !asksOnly, !ignored, let rules = pairing?.rules, witnessed > rules.position,
            session.rules.state == .active || session.rules.peerIsGone(now: now),
            logThrottle.admit("refused a request behind its witness", now: now)
        {
            logger.notice(
                "refused a request whose witnessed journal position is beyond this coordinator's",
                metadata: [
                    "witnessed": "\(witnessed)", "journal": "\(rules.position)", "state": "\(rules.state.rawValue)",
                ])
        }
        let reason =
            pairing?.rules.state == .passive && !session.rules.peerIsGone(now: now)
            ? "this coordinator is the passive one of a pair; the active one is \(session.otherEndpoint)"
            : (effects.compactMap { if case .refuse(let reason) = $0 { reason } else { nil } }.first
                ?? "this coordinator of a pair is not active") + "; the other coordinator is \(session.otherEndpoint)"
                + (pairing?.fault.map { "; the pair's fault: \($0)" } ?? "")
        logger.debug(
            "refused a request as a coordinator of a pair that is not active",
            metadata: ["reason": "\(PrintableText.escape(reason))", "peer": "\(sender.identity)"])
        deliver([
            Outbound(
                peer: sender.identity,
                message: .refusal(Refusal(requestID: Self.requestID(of: message), code: .passive, reason: reason)))
        ])
        return false
    }

    /// Carries out the rules' effects, in order (`sender`: the client or worker whose request they answer);
    /// returns whether a request was accepted.
    @discardableResult
    private func carryOut(_ effects: [PairEffect], from sender: MessageSender? = nil) -> Bool {
        var accepted = false
        for effect in effects {
            switch effect {
            case .implausibleWitness(let reason):
                refusedMessages["Envelope.witnessed", default: 0] += 1  // shiftwork_messages_refused_total{field}
                if logThrottle.admit("ignored an implausible witnessed position", now: .now) {
                    logger.warning(
                        "ignored a request's witnessed journal position: \(reason)",
                        metadata: ["peer": "\(sender.map { "\($0.identity)" } ?? "-")"])
                }
            case .becomeActive(let takeover, let reason): becomeActive(takeover: takeover, reason: reason)
            case .becomePassive(let reason): becomePassive(reason: reason)
            case .record(let history): recordHistory(history)
            case .accept: accepted = true
            case .refuse: break  // answered by `pairAdmits`
            case .misconfigured(let reason):
                pairing?.fault = reason
                if logThrottle.admit("pair misconfigured", now: .now) { logger.error("\(reason)") }
            case .splitBrain(let reason): logger.error("\(reason)")
            }
        }
        return accepted
    }

    private func recordHistory(_ history: PairHistory) {
        do {
            try journal?.recordPairHistory(history)
        } catch {
            logger.error("could not journal the pair's history", metadata: ["error": "\(error)"])
        }
        switch history {
        case .activeWithPeer:
            logger.info("the passive coordinator holds the whole journal: acknowledgements now wait for it")
            let held = pairing?.sender?.peerHeld ?? .empty  // read before the gate is changed (exclusive access)
            pairing?.gate.hold(peerHolds: held)
        case .activeAlone:
            if pairing?.gate.isHolding == true {
                logger.warning("the passive coordinator is gone: going on alone (acknowledgements no longer wait)")
            }
            deliver(pairing?.gate.release() ?? [])
            pairing?.behindSince = nil
        case .passive, .none:
            break
        }
        // At once, not at the next heartbeat: the passive one may take over only after it heard that it is in
        // step (`peerInStep`), and the active one may die within a heartbeat of the change.
        if history == .activeWithPeer || history == .activeAlone { announce() }
    }

    /// Serves from now on: the journal is opened again and replayed into the core, as a restart does (a
    /// takeover first journals its new term).
    private func becomeActive(takeover: Bool, reason: String) {
        guard let directory = configuration.dataDirectory, let term = pairing?.rules.position.term else { return }
        logger.notice(
            "this coordinator is now the active one of its pair: \(reason)", metadata: ["takeover": "\(takeover)"])
        journal = nil  // lets go of the lock
        do {
            let (reopened, recovered) = try Journal.open(
                directory: directory, coordinatorID: dispatcher.coordinatorID, paired: true)
            journal = reopened
            pairing?.sender = ReplicationSender(records: reopened.takeOpenedRecords() ?? [])
            reopened.written = []
            if takeover { try reopened.recordPairTerm(term) }
            pairing?.rules.position = reopened.position
            core.settings.incarnation = recovered.incarnation
            restore(recovered)
        } catch {
            logger.critical("could not open the journal to take over: \(error)")
        }
    }

    /// Follows the peer from now on: whatever this one served is forgotten (the peer's journal is the newer);
    /// its stream replaces or extends the journal.
    private func becomePassive(reason: String) {
        logger.notice("this coordinator is now the passive one of its pair: \(reason)")
        if pairing?.sender != nil {
            // It served: its core's state goes; the stream brings the journal that counts.
            core = Self.makeCore(configuration)
        }
        _ = pairing?.gate.release()  // never sent: the peer leads
        pairing?.sender = nil
        pairing?.behindSince = nil
        if let position = journal?.position { pairing?.receiver.reset(held: position) }
    }
}
