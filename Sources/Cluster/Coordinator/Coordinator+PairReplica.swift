import Foundation
import Logging
import Wire

/// The passive coordinator of a pair applies the active one's journal stream: `ReplicationReceiver`
/// checks each message, the journal takes what it says to apply (records appended, synced first when the
/// active one synced one of them, or a snapshot replacing the journal; result files before the records that
/// name them), and the answer says how far it holds (`PairHeld`), once it is written.
extension Coordinator {
    func applyStream(_ records: WirePairJournal) {
        guard pairing?.rules.state == .passive else { return }
        let (apply, answer) = pairing!.receiver.receive(records, now: .now)
        // Never an answer for records not written (and synced, when they must be): the active one would
        // acknowledge what this one does not hold. The next message finds the gap and they come again.
        if let apply, !applyToJournal(apply) { return }
        if let reason = pairing?.receiver.lastRefusal, answer?.rejected == true {
            logger.warning("refused part of the active coordinator's journal stream: \(reason)")
        }
        if let answer { answerHeld(answer) }
    }

    func applySnapshot(_ snapshot: WirePairSnapshot) {
        guard pairing?.rules.state == .passive else { return }
        let (apply, answer) = pairing!.receiver.receive(snapshot)
        if let apply, !applyToJournal(apply) { return }
        if let reason = pairing?.receiver.lastRefusal, answer?.rejected == true {
            logger.error("refused the active coordinator's snapshot: \(reason)")
        }
        if let answer { answerHeld(answer) }
    }

    /// Returns whether the journal took it all.
    private func applyToJournal(_ apply: ReplicationReceiver.Apply) -> Bool {
        guard let journal else { return false }
        var applied = true
        do {
            switch apply {
            case .append(let frames, let count, let reaches, let sync):
                try journal.appendReplicated(frames: frames, reaches: reaches, sync: sync)
                pairing?.appliedRecords += UInt64(count)
            case .replace(let records):
                try journal.replace(with: records, history: pairing?.rules.history ?? .passive)
                logger.info(
                    "replaced the journal with the active coordinator's", metadata: ["position": "\(journal.position)"])
            }
        } catch {
            applied = false
            logger.error(
                "could not write the active coordinator's journal stream here", metadata: ["error": "\(error)"])
        }
        pairing?.receiver.reset(held: journal.position)
        pairing?.rules.position = journal.position
        return applied
    }

    func applyResultFile(_ file: WirePairResultFile) {
        guard pairing?.rules.state == .passive, let journal else { return }
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
        // Not `let session = pairing`: a copy of the whole session for each answer costs the passive one's CPU.
        guard let link = pairing?.link, let delay = pairing?.configuration.answerDelay else { return }
        guard delay > .zero else { return link.send([.pairHeld(answer)]) }
        // Test hook (a slow backup): the answer goes later, in order (a one-shot timer of this thread).
        executor.schedule(after: delay) { link.send([.pairHeld(answer)]) }
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
