import Wire

/// Time limits: a task attempt that runs on its worker for longer than the task timeout is cancelled
/// there and, once the worker confirmed, failed as timed out (its remote operation retries it, or the
/// item fails with "timed out after N s"); a success that crossed the cancel is used instead (first
/// valid result wins, `Dispatcher+LateResults`); a batch whose deadline passed has its unfinished items
/// cancelled with that cause. The coordinator's timer calls `enforceBatchDeadlines` every heartbeat
/// interval, and `enforceTaskTimeouts` as of its tick once the messages received before it are handled
/// (`LivenessCheckpoint`): a result waiting unread in the socket is taken, not timed out.
extension Coordinator {
    /// Starts the clock of the assignments among `outbound` (called as they are sent).
    func noteSent(_ outbound: [Outbound]) {
        taskTimeouts.sent(outbound, now: .now)
    }

    /// Cancels the task attempts unanswered for longer than the task timeout as of `instant` (every
    /// message received before it handled).
    func enforceTaskTimeouts(asOf instant: ContinuousClock.Instant) {
        for key in taskTimeouts.expire(now: instant, dispatcher: dispatcher) {
            logger.info("task timed out; cancelling it on its worker", metadata: [
                "task": "\(dispatcher.entries[key]?.assignment.taskID ?? "\(key)")",
                "timeout": "\(taskTimeouts.limitSeconds) s",
            ])
            send(dispatcher.timeOut(key: key, reason: "timed out after \(taskTimeouts.limitSeconds) s"))
        }
        settleTimedOutTasks()
    }

    /// Cancels the unfinished items of the batches whose deadline passed.
    func enforceBatchDeadlines(now: ContinuousClock.Instant) {
        for (batchID, seconds) in batchDeadlines.expired(now: now) {
            cancelAtDeadline(batchID, seconds: seconds)
        }
    }

    /// Fails the timed-out attempts whose cancel their worker confirmed (or whose worker is gone): the
    /// remote operation waiting for each retries it or fails. A success that crossed the cancel is not
    /// such a confirmation but the task's result (`Dispatcher+LateResults`): nothing is failed then.
    func settleTimedOutTasks() {
        // Called after every result: without attempts timing out, not even the dispatcher is looked at.
        guard !taskTimeouts.timingOut.isEmpty else { return }
        for (key, timedOut) in taskTimeouts.settle(dispatcher: dispatcher) {
            guard let waiter = waiters.removeValue(forKey: key) else { continue }  // withdrawn meanwhile
            let workerID = dispatcher.workers[timedOut.worker]?.workerID ?? timedOut.worker.description
            waiter.received(.failure(RemoteTaskError(
                failure: taskTimeouts.failure(timedOut, workerID: workerID), attempt: timedOut.attempt,
                worker: timedOut.worker, workerID: workerID)))
        }
    }

    /// Cancels a batch's unfinished items because its deadline passed; journaled like a client's cancel.
    private func cancelAtDeadline(_ batchID: String, seconds: UInt32) {
        finishItems()  // items that ended already keep their outcome
        let request = CancelBatch(batchID: batchID)
        let cancellation = registry.cancel(request, from: nil)
        guard cancellation.isAccepted, !cancellation.items.isEmpty else { return }
        logger.info("batch deadline passed; cancelling its unfinished items", metadata: [
            "batch": "\(batchID)", "deadline": "\(seconds) s", "cancelled": "\(cancellation.items.count)",
        ])
        do {
            try journal?.recordCancelled(request)
        } catch {
            logger.error("could not record a cancellation in the journal", metadata: ["batch": "\(batchID)", "error": "\(error)"])
        }
        carryOut(cancellation, of: batchID, reason: BatchDeadlineError(seconds: seconds))
    }
}
