import Wire

/// Work stealing at a batch's tail, the worker's part: the coordinator asks for a task that waits behind
/// this worker's busy compute threads (`GiveBackTask`), to run it on a worker whose compute thread is idle.
/// The task's `StartGate` decides: given up before its pipeline started, the task is dropped here (never
/// run, never answered) and the answer says "given back"; once started, the answer says so and nothing
/// changes. So exactly one worker runs it.
extension Worker {
    func giveBack(_ request: GiveBackTask) {
        // By its key; a download whose result is held back for its tilt-shift (`--chained-tasks together`)
        // is given back with that tilt-shift, which is what waits.
        let held =
            running.values.first {
                $0.assignment.taskKey == request.taskKey && $0.assignment.attempt == request.attempt
            }
            ?? running.values.first { $0.chainedAfter == request.taskKey && $0.heldBack?.attempt == request.attempt }
        var givenBack = false
        if let task = held, let gate = task.startGate, gate.giveUp() {
            running[task.assignment.taskID] = nil
            runningShrank()
            task.operation.cancel()  // withdrawn from the compute threads' queue; its result is never sent
            task.log.debug("task given back to the coordinator before it started")
            givenBack = true
        }
        send(.taskGivenBack(TaskGivenBack(taskKey: request.taskKey, attempt: request.attempt, givenBack: givenBack)))
    }
}
