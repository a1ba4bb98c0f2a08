import Wire

/// Task attempts that run on their workers for longer than the task timeout: cancelled there, and once
/// the worker confirmed (or is gone) failed as timed out, which the item retries or ends with. A success
/// that crossed the cancel is the task's result instead (`Dispatcher+LateResults`).
extension CoordinatorCore {
    /// Cancels the attempts unanswered for longer than the task timeout (as of the event's instant, every
    /// message received before it handled: `CoreEvent.judgeSilence`).
    mutating func enforceTaskTimeouts() {
        for key in taskTimeouts.expire(now: eventInstant, dispatcher: dispatcher) {
            log(
                .info, "task timed out; cancelling it on its worker",
                [
                    "task": dispatcher.entries[key]?.assignment.taskID ?? "\(key)",
                    "timeout": "\(taskTimeouts.limitSeconds) s",
                ])
            send(dispatcher.timeOut(key: key, reason: "timed out after \(taskTimeouts.limitSeconds) s"))
        }
        settleTimedOutTasks()
    }

    /// Fails the timed-out attempts whose cancel their worker confirmed (or whose worker is gone).
    mutating func settleTimedOutTasks() {
        guard !taskTimeouts.timingOut.isEmpty else { return }
        for (key, timedOut) in taskTimeouts.settle(dispatcher: dispatcher) {
            let workerID = dispatcher.workers[timedOut.worker]?.workerID ?? timedOut.worker.description
            guard let owner = owners[key], let item = runs[owner.batchID]?.items[owner.itemIndex],
                item.currentKey == key || item.tasks.first?.taskKey == key
            else { continue }  // withdrawn meanwhile
            deliver(
                TaskResult(
                    taskID: item.current.taskID, attempt: timedOut.attempt,
                    outcome: .failure(taskTimeouts.failure(timedOut, workerID: workerID)), taskKey: key),
                from: timedOut.worker, workerID: workerID)
        }
    }
}
