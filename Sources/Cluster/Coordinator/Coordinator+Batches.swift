import Foundation
import Messaging
import Wire

/// Submissions: a submission whose idempotency key names a batch this coordinator keeps attaches to it
/// (`Coordinator+Sharing`); any other goes to the core, which refuses it with why or accepts it (journaled
/// before the client hears of it) and starts its items. The batch's owner is recorded for access control.
extension Coordinator {
    func accept(_ submit: SubmitBatch, from sender: MessageSender) {
        if attachByIdempotencyKey(submit, from: sender) { return }
        let batchID = "b-" + UUID().uuidString.lowercased().prefix(8)
        apply(.submit(submit, from: sender, batchID: batchID))
        if registry.batches[batchID] != nil { access.recordOwner(sender.key, of: batchID) }
    }
}

extension Coordinator {
    /// Hands the core what a journal held (a start, or a coordinator of a pair taking over): the batches
    /// and their owners; what was left of them runs.
    func restore(_ recovered: RecoveredState) {
        for saved in recovered.batches {
            access.recordOwner(try? CurvePublicKey(z85: saved.ownerKey), of: saved.batchID)
        }
        sendingTogether { apply(.restore(recovered, wallClockMilliseconds: Journal.nowMilliseconds())) }
    }
}
