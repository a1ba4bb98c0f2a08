import Messaging
import Wire

/// A worker's messages speak only for the sender's own registration and tasks (`WorkerBinding`): the
/// coordinator checks each one after its roles (`Coordinator+Access`) and before the dispatcher sees it. A
/// refused message is dropped, logged (escaped, throttled) and counted in `shiftwork_refusals_total`; a
/// refused hello is also answered with `REFUSAL_CODE_FORBIDDEN`, so that a worker started with a taken
/// worker ID stops and says why.
extension Coordinator {
    /// Whether `message` (a hello, heartbeat or goodbye) from `sender` may be carried out.
    func speaksForSender(_ message: Message, from sender: MessageSender) -> Bool {
        let claim: WorkerBinding.Claim
        switch message {
        case .workerHello(let hello):
            let workerID = hello.workerID.isEmpty ? sender.identity.description : hello.workerID
            let holder = dispatcher.workers.values.first { $0.workerID == workerID && $0.peer != sender.identity }
            claim = .hello(workerID: workerID, holder: holder.map(Self.registration))
        case .heartbeat, .workerGoodbye, .taskGivenBack:
            claim = .registered
        default:
            return true
        }
        guard let refusal = WorkerBinding.decide(claim, from: sender, registered: registration(of: sender)) else {
            return true
        }
        refuse(refusal, from: sender)
        if case .workerHello = message {
            send([
                Outbound(peer: sender.identity, message: .refusal(Refusal(code: .forbidden, reason: refusal.message)))
            ])
        }
        return false
    }

    /// Whether `sender` may give `result`: it answers a task assigned to the sender's own connection, or
    /// it is stale (which the dispatcher counts); otherwise it is refused.
    func isSendersResult(_ result: TaskResult, from sender: MessageSender) -> Bool {
        let claim = WorkerBinding.Claim.result(taskID: result.taskID, runningOn: currentHolder(of: result))
        guard let refusal = WorkerBinding.decide(claim, from: sender, registered: registration(of: sender)) else {
            return true
        }
        refuse(refusal, from: sender)
        return false
    }

    /// The connection that runs the attempt `result` answers, when it is the task's current attempt.
    private func currentHolder(of result: TaskResult) -> PeerIdentity? {
        guard let key = result.taskKey != 0 ? result.taskKey : dispatcher.keysByID[result.taskID],
            let entry = dispatcher.entries[key], entry.assignment.attempt == result.attempt,
            entry.assignment.taskID == result.taskID
        else { return nil }
        switch entry.state {
        case .running(let worker), .cancelling(let worker): return worker
        case .queued: return nil
        }
    }

    private func registration(of sender: MessageSender) -> WorkerBinding.Registration? {
        dispatcher.workers[sender.identity].map(Self.registration)
    }

    private static func registration(_ record: WorkerRecord) -> WorkerBinding.Registration {
        WorkerBinding.Registration(peer: record.peer, workerID: record.workerID, key: record.key)
    }

    /// Logs (throttled; every value escaped by the log handler) and counts a refused worker message.
    private func refuse(_ refusal: WorkerBinding.Refusal, from sender: MessageSender) {
        access.count(refusal.reason, request: .workerMessage, from: sender.key)
        if logThrottle.admit("refused a worker message", now: .now) {
            logger.warning(
                "refused a worker message: it does not speak for its sender",
                metadata: [
                    "peer": "\(sender.identity)", "key": "\(sender.key?.z85 ?? "-")",
                    "reason": "\(refusal.reason.rawValue)",
                    "detail": "\(refusal.message)",
                ])
        }
    }
}
