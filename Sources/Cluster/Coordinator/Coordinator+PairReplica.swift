import Foundation
import Logging
import Wire

/// The passive coordinator of a pair applies the active one's journal stream: `ReplicationReceiver`
/// checks each message, the journal takes what it says to apply (records appended, or a snapshot
/// replacing the journal; result files before the records that name them), and the answer says how far
/// it holds (`PairHeld`).
extension Coordinator {
    func applyStream(_ records: WirePairJournal) {
        guard let session = pairing, session.rules.state == .passive else { return }
        let (apply, answer) = pairing!.receiver.receive(records, now: .now)
        if let apply { applyToJournal(apply) }
        if let reason = pairing?.receiver.lastRefusal, answer?.rejected == true {
            logger.warning("refused part of the active coordinator's journal stream: \(reason)")
        }
        if let answer { answerHeld(answer) }
    }

    func applySnapshot(_ snapshot: WirePairSnapshot) {
        guard let session = pairing, session.rules.state == .passive else { return }
        let (apply, answer) = pairing!.receiver.receive(snapshot)
        if let apply { applyToJournal(apply) }
        if let reason = pairing?.receiver.lastRefusal, answer?.rejected == true {
            logger.error("refused the active coordinator's snapshot: \(reason)")
        }
        if let answer { answerHeld(answer) }
    }

    private func applyToJournal(_ apply: ReplicationReceiver.Apply) {
        guard let journal else { return }
        do {
            switch apply {
            case .append(let records):
                try journal.appendReplicated(records)
                pairing?.appliedRecords += UInt64(records.count)
            case .replace(let records):
                try journal.replace(with: records, history: pairing?.rules.history ?? .passive)
                logger.info(
                    "replaced the journal with the active coordinator's", metadata: ["position": "\(journal.position)"])
            }
        } catch {
            logger.error(
                "could not write the active coordinator's journal stream here", metadata: ["error": "\(error)"])
        }
        pairing?.receiver.reset(held: journal.position)
        pairing?.rules.position = journal.position
    }

    func applyResultFile(_ file: WirePairResultFile) {
        guard let session = pairing, session.rules.state == .passive, let journal else { return }
        if let problem = ReplicationReceiver.problem(with: file) {
            droppedMessages += 1
            logger.warning("refused a result file from the active coordinator: \(PrintableText.escape(problem))")
            return
        }
        do {
            try journal.writeReplicatedResult(batchID: file.batchID, itemIndex: file.itemIndex, data: file.data)
        } catch {
            logger.error("could not write a result file from the active coordinator", metadata: ["error": "\(error)"])
        }
    }

    private func answerHeld(_ answer: WirePairHeld) {
        guard let session = pairing else { return }
        let delay = session.configuration.answerDelay
        guard delay > .zero else { return session.link.send([.pairHeld(answer)]) }
        // Test hook (a slow backup): the answer goes later, in order.
        let link = session.link
        Task {
            try? await Task.sleep(for: delay)
            link.send([.pairHeld(answer)])
        }
    }
}

extension Coordinator {
    /// This coordinator's part of a pair for `status` and the metrics (`nil` when it runs alone).
    func pairStatus(now: ContinuousClock.Instant) -> WirePairStatus? {
        guard let session = pairing else { return nil }
        let announcement = session.rules.announcement.wire(
            hello: session.hello(coordinatorID: dispatcher.coordinatorID))
        let peerState = session.rules.peer.map { WirePairState($0.state) } ?? .unspecified
        let lagMilliseconds = session.behindSince.map { since -> UInt64 in
            let elapsed = now - since
            return UInt64(max(0, elapsed.components.seconds)) * 1000
                + UInt64(max(0, elapsed.components.attoseconds) / 1_000_000_000_000_000)
        }
        return WirePairStatus(
            role: announcement.role, state: announcement.state, peerState: peerState,
            position: session.rules.position.wire, lagRecords: session.sender?.lagRecords ?? 0,
            lagMs: session.rules.state == .active ? lagMilliseconds ?? 0 : 0,
            heldMessages: UInt32(clamping: session.gate.waitingCount), peer: session.otherEndpoint,
            history: session.rules.history.rawValue)
    }
}
