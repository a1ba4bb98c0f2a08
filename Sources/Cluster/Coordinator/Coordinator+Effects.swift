import Foundation
import Logging
import Wire

/// The actor's half of `CoordinatorCore`: events in, effects carried out, in the order the core gives
/// them. A journal record is written before the messages that follow it are sent (`send` flushes the
/// journal first); a failed attempt is flushed at once (with no worker left, nothing may be sent for a while).
extension Coordinator {
    /// Hands the core one event, taken now (or as of `now`), and carries out its effects.
    ///
    /// `followingRecord`: the event itself follows a journal record (`recorded`): what it sends acknowledges it.
    func apply(_ event: CoreEvent, now: ContinuousClock.Instant = .now, followingRecord: Bool = false) {
        let effects = core.handle(event, now: now, wallClockMilliseconds: Journal.nowMilliseconds())
        // Messages after a record acknowledge it: with a pair, they wait until the peer holds it.
        var followsRecord = followingRecord
        for effect in effects {
            switch effect {
            case .journal(let entry):
                if case .retired(let batchID) = entry { access.forget(batchID) }  // the batch is unknown from now on
                record(entry)
                followsRecord = true
            case .recordDurably(let entry, let decision):
                // Synced before the client hears of it; the core goes on with the journal's answer.
                do {
                    try journal?.record(entry)
                    apply(.recorded(decision), now: now, followingRecord: true)
                } catch {
                    apply(.notRecorded(decision, reason: "\(error)"), now: now)
                }
            case .send(let out): send(out, following: followsRecord ? journal?.position : nil)
            case .setTimer(let wait, let timer):
                // A rare path (a failed attempt): a task sleeps for the wait, then the core hears of it.
                Task { [weak self] in
                    try? await Task.sleep(for: wait)
                    await self?.timerFired(timer)
                }
            case .released:
                AllocatorTrim.request()  // trimmed at the next tick
            case .log(let level, let message, let metadata):
                // Failed items are logged a few per window: a batch whose origin is down fails every item at once.
                if message == "item failed", !logThrottle.admit(message, now: .now) { continue }
                logger.log(level: level, "\(message)", metadata: metadata.mapValues { .string($0) })
            }
        }
    }

    private func timerFired(_ timer: CoreTimer) {
        guard isServing else { return }
        sendingTogether { apply(.timerFired(timer)) }
    }

    /// Writes a journal record (buffered; `send` flushes before anything goes out).
    private func record(_ entry: JournalEntry) {
        guard let journal else { return }
        do {
            try journal.record(entry)
            if case .attemptFailed = entry { try journal.flush() }
        } catch {
            logger.error("could not write the journal; \(Self.consequence(of: entry))", metadata: ["error": "\(error)"])
        }
    }

    /// What a record the journal could not take means after a restart.
    private static func consequence(of entry: JournalEntry) -> String {
        switch entry {
        case .accepted(let batchID, _, _, _): "batch \(batchID) would be lost by a restart"
        case .finished(let item): "item \(item.itemIndex) of batch \(item.batchID) would run again after a restart"
        case .itemsAdded(let added): "the items a manifest added to batch \(added.batchID) would be lost by a restart"
        case .attemptFailed(let batchID, let item, _):
            "status after a restart will not show a failed attempt of item \(item) of batch \(batchID)"
        case .cancelled(let cancel): "the cancel of batch \(cancel.batchID) would be undone by a restart"
        case .retried(let batchID, _): "the retry of batch \(batchID) would be undone by a restart"
        case .retired(let batchID): "batch \(batchID) would be kept again after a restart"
        }
    }
}
