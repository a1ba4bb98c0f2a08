import Messaging
import Wire

/// Every message is checked against `MessageBounds` as it is taken, before anything acts on it: a message
/// with a field out of bounds is refused, logged (escaped, throttled) and counted by field in
/// `shiftwork_messages_refused_total`. A client's request and a worker's hello are answered with a
/// `Refusal` naming the field and its limit (`.limit`, or `.invalidRequest` for a value outside its range);
/// a heartbeat or goodbye is dropped (a refusal would stop the worker); a result whose task is known
/// fails that attempt with the reason instead (its task is not left waiting for the task timeout), and in
/// a `TaskResultBatch` of an acceptable length the results within bounds count as they are.
extension Coordinator {
    /// Whether `message` from `sender` is within bounds; when not, it has been refused.
    func isWithinBounds(_ message: Message, from sender: MessageSender, now: ContinuousClock.Instant) -> Bool {
        guard let violation = MessageBounds.violation(in: message, maxBatchItems: configuration.maxBatchItems) else {
            return true
        }
        refusedMessages[violation.counterField, default: 0] += 1
        if logThrottle.admit("refused a message out of bounds", now: now) {
            logger.warning(
                "refused a message with a field out of bounds",
                metadata: [
                    "peer": "\(sender.identity)", "field": "\(violation.field)",
                    "reason": "\(PrintableText.escape(violation.reason))",
                ])
        }
        switch message {
        case .heartbeat, .workerGoodbye, .taskGivenBack:
            break
        case .taskResult(let result):
            failAttempt(answeredBy: result, violation, from: sender, now: now)
        case .taskResults(let results) where results.count <= MessageBounds.maxHeldTasks:
            // Element by element: the results within bounds count as they are, the others fail their attempts.
            for result in results {
                if let own = MessageBounds.violation(
                    in: .taskResult(result), maxBatchItems: configuration.maxBatchItems)
                {
                    failAttempt(answeredBy: result, own, from: sender, now: now)
                } else if isSendersResult(result, from: sender) {
                    apply(.results([result], from: sender.identity), now: now)
                }
            }
        case .taskResults:
            break
        default:
            let requestID = Self.requestID(of: message)
            send([
                Outbound(
                    peer: sender.identity,
                    message: .refusal(
                        Refusal(
                            requestID: requestID.utf8.count <= MessageBounds.maxIDBytes ? requestID : "",
                            code: violation.code, reason: "refused: \(violation.reason)")))
            ])
        }
        return false
    }

    /// A result refused for its fields: the attempt it answers fails with why (when it is the sender's
    /// current attempt of a known task; anything else is stale and dropped as such).
    private func failAttempt(
        answeredBy result: TaskResult, _ violation: MessageBounds.Violation,
        from sender: MessageSender, now: ContinuousClock.Instant
    ) {
        guard result.taskID.utf8.count <= MessageBounds.maxIDBytes, isSendersResult(result, from: sender) else {
            return
        }
        var failed = result
        failed.outcome = .failure(
            TaskFailure(
                code: .internal,
                message:
                    "the worker's result was refused: \(violation.reason) (does the worker run another version of shiftwork?)"
            ))
        apply(.results([failed], from: sender.identity), now: now)
    }
}
