import Foundation
import Logging
import Operations
import Runtime
import Wire

/// Running assigned tasks: starting each as an operation, and answering it with its result when the
/// operation's completion reaches the worker's inbox (`WorkerEvent.taskFinished`).
extension Worker {
    func start(_ received: TaskAssignment, chainedAfter: UInt64 = 0, heldBack: TaskResult? = nil) {
        if received.kind == .noop {
            // Nothing to run: answered at once, without an operation (and sent with the other results of
            // this wake-up).
            pendingResults.append(
                TaskResult(
                    taskID: received.taskID, attempt: received.attempt, outcome: .output(TaskOutput(data: [])),
                    taskKey: received.taskKey))
            return
        }
        let log = TaskLogger(logger, assignment: received)
        log.debug(chainedAfter == 0 ? "task received" : "chained tilt-shift taken up after its download")
        guard let assignment = inputCache.resolve(received) else {
            let failure = TaskFailure(
                code: .inputMissing,
                message:
                    "\(received.source): its downloaded image is no longer in this worker's cache; the coordinator downloads it again"
            )
            sendResult(
                TaskResult(
                    taskID: received.taskID, attempt: received.attempt, outcome: .failure(failure),
                    taskKey: received.taskKey), after: heldBack)
            log.info(
                "task rejected, result sent",
                metadata: ["code": "\(failure.code.logName)", "error": "\(failure.message)"])
            return
        }
        var assigned: AssignedTask
        do {
            assigned = try AssignedTask(
                assignment, fetcher: fetcher, filterThreads: configuration.filterThreads, limits: configuration.limits,
                computeThreads: computeThreads, sinkThreads: sinkThreads, log: log)
        } catch {
            sendResult(
                TaskResult(
                    taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(error.failure),
                    taskKey: assignment.taskKey),
                after: heldBack)
            log.info(
                "task rejected, result sent",
                metadata: [
                    "code": "\(error.failure.code.logName)", "error": "\(error.failure.message)",
                ])
            return
        }
        assigned.chainedAfter = chainedAfter
        assigned.heldBack = heldBack
        let task = assigned
        let operation = task.operation
        // The result is read on the thread that finished the operation and posted to the worker's loop.
        operation.onCompletion { [inbox] _ in inbox.yield(.taskFinished(task, task.result)) }
        if let replaced = running[assignment.taskID] {
            // The same task ID again: the task it replaces is cancelled, and still answered when it ends.
            replaced.log.info("task replaced by another assignment with its task ID: cancelled, its result still sent")
            replaced.operation.cancel()
            superseded[ObjectIdentifier(replaced.operation)] = replaced
        }
        running[assignment.taskID] = task
        do {
            try queue.addOperation(operation)
        } catch {
            running[assignment.taskID] = nil
            runningShrank()
            let message = "\(operation.name) could not be queued: \(error)"
            sendResult(
                TaskResult(
                    taskID: assignment.taskID, attempt: assignment.attempt,
                    outcome: .failure(
                        TaskFailure(code: .internal, message: message)), taskKey: assignment.taskKey), after: heldBack)
            log.error("task could not be queued, failure sent", metadata: ["error": "\(message)"])
        }
    }

    /// Sends the result of a finished task, unless the task was dropped meanwhile (re-registration).
    func finished(_ task: AssignedTask, _ finishedResult: TaskResult) {
        let isCurrent = running[task.assignment.taskID]?.operation === task.operation
        guard isCurrent || superseded.removeValue(forKey: ObjectIdentifier(task.operation)) != nil else {
            task.log.debug("task ended after it was dropped: no result sent")
            return
        }
        if isCurrent { running[task.assignment.taskID] = nil }
        defer { if isCurrent { runningShrank() } }
        var result = finishedResult
        if task.assignment.kind == .download, case .output(let output) = result.outcome, !ManifestList.isList(output) {
            // Kept for the tilt-shift, which the coordinator sends here (locality); with `keepOutput` the
            // bytes stay here alone.
            result.outcome = inputCache.keep(output, of: task.assignment, capacityOption: "--input-cache-mb")
        }
        var encoded = WireCodec.encode(.taskResult(result))
        let limit = coordinatorMaxMessageBytes ?? configuration.socketOptions.maxMessageSize
        if limit >= 0, Int64(encoded.count) > limit {
            // The coordinator would drop the connection rather than take it: fail the task instead.
            result.outcome = .failure(
                TaskFailure(
                    code: .limit,
                    message:
                        "\(task.assignment.source): the output is \(encoded.count >> 20) MiB, more than the largest message "
                        + "the coordinator accepts (\(limit >> 20) MiB, its --max-message-mb): lower --quality, or raise that limit"
                ))
            encoded = WireCodec.encode(.taskResult(result))
        }
        task.logSent(result)
        // A chained tilt-shift starts in the slot the download leaves, when the download's image was kept
        // here (the coordinator counts it as running from that result on); after a failure, or for a
        // manifest, it does not run (nor is answered).
        if isCurrent, let followOn = task.assignment.chainedAssignment, !isStopping,
            case .output(let output) = result.outcome,
            output.heldOnWorker
        {
            if configuration.reportsChainedTasksTogether, coordinatorAcceptsBatches {
                return start(followOn, chainedAfter: task.assignment.taskKey, heldBack: result)  // sent with its result
            }
            channel?.send([encoded])
            return start(followOn, chainedAfter: task.assignment.taskKey)
        }
        if let heldBack = task.heldBack {
            let together = WireCodec.encode(.taskResults([heldBack, result]))
            if limit < 0 || Int64(together.count) <= limit {
                channel?.send([together])
                return
            }
            channel?.send([WireCodec.encode(.taskResult(heldBack))])  // each alone within the limit
        }
        channel?.send([encoded])
    }

    /// Sends a task's result, after the chained download's result held back for it (in one message).
    private func sendResult(_ result: TaskResult, after heldBack: TaskResult?) {
        guard let heldBack else { return send(.taskResult(result)) }
        send(.taskResults([heldBack, result]))
    }

    /// Sends the results gathered while handling one wake-up's messages: several in one message when
    /// the coordinator accepts that.
    func flushResults() {
        guard !pendingResults.isEmpty else { return }
        let results = pendingResults.map(Message.taskResult)
        pendingResults = []
        let messages = coordinatorAcceptsBatches ? MessageBatching.coalesce(results) : results
        channel?.send(contentsOf: messages.map { [WireCodec.encode($0)] })
    }
}
