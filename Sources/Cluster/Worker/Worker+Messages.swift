import Foundation
import Logging
import Runtime
import Wire

/// What a worker does with each message from the coordinator: welcomes, assignments, cancels, give-backs,
/// refusals. A malformed message is dropped and counted, never fatal.
extension Worker {
    func handle(_ frames: [[UInt8]]) throws {
        guard let payload = frames.last else { return }
        let message: Message
        var position: WirePairPosition?
        do {
            message = try WireCodec.decode(payload, witnessed: &position)
            witnessed.witness(position)
        } catch {
            droppedMessages += 1
            if logThrottle.admit("dropped a malformed message from the coordinator", now: .now) {
                logger.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
            }
            return
        }
        for message in MessageBatching.unbatched(message) {
            try handle(message)
        }
    }

    private func handle(_ message: Message) throws {
        switch message {
        case .welcome(let welcome):
            // A (re)welcome means the coordinator holds none of our tasks: whatever still runs is orphaned,
            // and results not sent yet answer the old registration.
            helloSentAt = nil
            watch?.answered()
            let orphaned = Array(running.values) + superseded.values
            running = [:]
            superseded = [:]
            runningShrank()
            pendingResults = []
            lastSequence = 0
            coordinatorAcceptsBatches = welcome.acceptsBatches
            for task in orphaned {
                task.log.info("dropping the task: the coordinator registered this worker again and no longer holds it")
                task.operation.cancel()
            }
            if welcome.heartbeatIntervalMs > 0 {
                heartbeatInterval = Self.heartbeatInterval(askedMs: welcome.heartbeatIntervalMs)
            }
            coordinatorMaxMessageBytes = welcome.maxMessageBytes > 0 ? Int64(clamping: welcome.maxMessageBytes) : nil
            inputCache.removeAll()
            isRegistered = true
            logger.info(
                "registered with the coordinator",
                metadata: [
                    "coordinator": "\(welcome.coordinatorID)", "dropped_tasks": "\(orphaned.count)",
                ])
        case .taskAssignment(let assignment):
            lastSequence = max(lastSequence, assignment.sequence)
            if let violation = MessageBounds.violation(in: assignment) { return refuse(assignment, violation) }
            start(assignment)
        case .cancelTask(let cancel):
            // Found by the key the coordinator addresses it by (minor 2), else by its ID (a minor-1 coordinator).
            // A download's key also reaches the tilt-shift chained to it (the cancel crossed the download's result).
            let held =
                cancel.taskKey != 0
                ? running.values.first { $0.assignment.taskKey == cancel.taskKey }
                    ?? running.values.first { $0.chainedAfter == cancel.taskKey }
                : running[cancel.taskID]
            if let task = held {
                task.log.debug("cancel requested by the coordinator", metadata: ["reason": "\(cancel.reason)"])
                task.operation.cancel()
            } else {
                // Its result has gone already, and serves as the confirmation.
                logger.debug(
                    "ignored a cancel for a task this worker no longer runs", metadata: ["task": "\(cancel.taskID)"])
            }
        case .giveBackTask(let request):
            giveBack(request)
        case .refusal(let refusal) where refusal.code == .passive:
            try refusedAsPassive(refusal)
        case .refusal(let refusal):
            if refusal.code == .unknownWorker, !isDraining {
                // Refusals arrive in order, one per heartbeat the coordinator did not know: those that come
                // after our hello answer heartbeats sent before it (e.g. a burst queued during a network
                // partition). Registering once is enough; each extra hello would make the coordinator
                // requeue what it had just sent us. A hello unanswered for two heartbeats may have been
                // lost with its connection: send it again.
                if let sent = helloSentAt, ContinuousClock.now - sent < heartbeatInterval * 2 {
                    logger.debug("the coordinator does not know this worker yet: its hello is on the way")
                    return
                }
                logger.info("the coordinator does not know this worker (it restarted?): registering again")
                sayHello()
            } else {
                logger.error("the coordinator refused this worker", metadata: ["reason": "\(refusal.reason)"])
                throw WorkerError.refused(refusal.reason)
            }
        default:
            droppedMessages += 1
            logger.debug("ignored a message meant for clients")
        }
    }

    /// Answers an assignment with a field out of bounds (`MessageBounds`) with a failure that names it: a
    /// worker answers every assignment it receives, however odd (the coordinator would otherwise learn of
    /// it only when it counts the assignment lost).
    private func refuse(_ assignment: TaskAssignment, _ violation: MessageBounds.Violation) {
        if logThrottle.admit("refused an assignment out of bounds", now: .now) {
            logger.warning(
                "refused an assignment with a field out of bounds; its failure is sent",
                metadata: [
                    "field": "\(violation.field)", "reason": "\(PrintableText.escape(violation.reason))",
                ])
        }
        let code: FailureCode = violation.code == .limit ? .limit : .internal
        pendingResults.append(
            TaskResult(
                taskID: assignment.taskID, attempt: assignment.attempt,
                outcome: .failure(TaskFailure(code: code, message: "the assignment was refused: \(violation.reason)")),
                taskKey: assignment.taskKey))
    }
}
