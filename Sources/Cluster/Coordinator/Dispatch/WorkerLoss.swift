import Wire

/// A task attempt lost with its worker: the worker died or left while running it, or its assignment
/// never reached the worker. The dispatcher has let the task go; the coordinator delivers `result` (a
/// transient `workerLost` failure) to the operation waiting for it, whose `TaskRetrySchedule` counts it
/// as an attempt against the batch's `--retries` and tries again, or fails the item.
///
/// Not a loss: a task a worker that leaves gracefully never reported receiving (it hands it back before
/// starting it); the dispatcher queues that one again without counting an attempt.
struct WorkerLoss: Equatable {
    /// The failure to deliver, with the task's key and the lost attempt's number.
    let result: TaskResult
    /// The worker the attempt was lost with, for status.
    let workerID: String
    /// Whether the worker was lost, or only the assignment on its way (the reason its retry is counted under).
    let reason: TaskResends.Reason

    /// The loss of `assignment` (key `key`) with worker `workerID`, for the reason given (e.g. "it died
    /// while running it"); `cause`: the worker (`workerLost`) or only the assignment (`assignmentLost`).
    init(
        _ assignment: TaskAssignment, key: TaskKey, workerID: String, reason: String,
        cause: TaskResends.Reason = .workerLost
    ) {
        self.workerID = workerID
        self.reason = cause
        let task = assignment.kind == .download ? "download" : assignment.kind == .noop ? "task" : "tilt-shift"
        result = TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt,
            outcome: .failure(
                TaskFailure(
                    code: .workerLost,
                    message:
                        "\(assignment.source): worker lost: its \(task) was on worker \(workerID), which \(reason)",
                    isTransient: true)),
            taskKey: key)
    }
}
