import Wire

/// Late results: the first valid result of a task wins, as with Ray, Celery or HyperQueue. A worker's success
/// for an attempt the coordinator has already given up on is the task's result as long as the task has none
/// yet; whatever the coordinator started instead is withdrawn, and nothing is delivered twice.
///
/// - An attempt cancelled for its task timeout (`timeOut`) whose success crosses the cancel completes the
///   task as if it had come in time: it is not failed as timed out, and no retry is ever queued. A
///   `CANCELLED` (or any failure) from it still confirms the cancel, and the attempt fails as timed out.
/// - A download's success that crossed its timeout cancel adopts its chained follow-on as usual, but that
///   cancel reaches the follow-on on the worker: a `CANCELLED` from it is sent to the same worker again
///   (a new attempt, counted as a `timed_out` re-send), any other result is its own.
/// - An attempt let go unanswered because its worker was declared dead (`LateAttempts`; also a timed-out one
///   whose cancel its worker never confirmed) may still be answered by that worker, once it is heard from
///   again: its success (bytes, or a sink's location; not a download's image kept on that worker, whose
///   cache went when it registered again) completes the task while the dispatcher holds the task's next
///   attempt (queued:
///   withdrawn; running or timing out: cancelled on its worker, whose answer then only confirms the cancel).
///   While the remote operation waits out its retry backoff, the dispatcher holds nothing for the task and
///   the success is stale.
/// - Everything else that answers no current attempt (a task already answered, withdrawn or finished, an
///   attempt replaced by a handed-back or lineage re-run, a result from another connection) is stale:
///   dropped and counted (`staleResults`, in `shiftwork_messages_dropped_total`).
extension Dispatcher {
    /// Cancels a running task that ran past its task timeout on its worker with `CancelTask{task_key}`, as
    /// `cancel` does, keeping its success if it crosses the cancel: that is its result. Unlike an item's
    /// withdrawal it keeps a download's follow-on offer, to adopt with that success (`Entry.crossedCancel`).
    mutating func timeOut(key: TaskKey, reason: String) -> [Outbound] {
        guard let entry = entries[key], case .running(let worker) = entry.state else { return [] }
        entries[key]?.state = .cancelling(worker: worker)
        entries[key]?.timedOut = true
        return [
            Outbound(
                peer: worker,
                message: .cancelTask(
                    CancelTask(
                        taskID: entry.assignment.taskID, reason: reason, taskKey: key)))
        ]
    }

    /// Notes the attempt of `entry` (task `key`), let go unanswered with worker `peer`: its success may
    /// still come.
    mutating func noteUnanswered(_ key: TaskKey, _ entry: Entry, on peer: PeerIdentity) {
        lateAttempts.note(
            key,
            LateAttempts.Attempt(
                attempt: entry.assignment.attempt, worker: peer,
                batchID: entry.assignment.batchID))
    }

    /// A success for an attempt let go unanswered (`LateAttempts`), while the dispatcher holds the task's
    /// next attempt: the task's result (with its `taskKey` set), that attempt withdrawn. `nil` when `result`
    /// is no such success (it is stale).
    mutating func useLateResult(
        _ result: TaskResult, from peer: PeerIdentity,
        now: ContinuousClock.Instant
    ) -> (TaskResult?, [Outbound])? {
        // A download whose image stayed on that worker is no result: the worker dropped its cache when it
        // registered again (or stays gone), and its tilt-shift would only download it again.
        guard !lateAttempts.isEmpty, case .output(let output) = result.outcome, !output.heldOnWorker,
            let key = result.taskKey != 0 ? result.taskKey : keysByID[result.taskID],
            lateAttempts.answers(key, attempt: result.attempt, from: peer),
            let entry = entries[key], entry.assignment.taskID == result.taskID
        else { return nil }
        var out: [Outbound] = []
        switch entry.state {
        case .queued:
            withdrawQueued(key, entry)
        case .running(let worker):
            entries[key]?.state = .cancelling(worker: worker)
            out.append(
                Outbound(
                    peer: worker,
                    message: .cancelTask(
                        CancelTask(
                            taskID: entry.assignment.taskID, reason: "an earlier attempt's result came first",
                            taskKey: key))))
        case .cancelling where entry.timedOut:
            entries[key]?.timedOut = false  // its own success is no longer wanted: the answer confirms the cancel
        case .cancelling:
            return nil  // withdrawn: nobody waits for it
        }
        lateAttempts.forget(key)
        lateResultsUsed += 1
        completedTasks += 1
        throughput.record(at: now)
        countReceived(output, of: entry.assignment.kind)
        if let index = workers.index(forKey: peer) {
            workers.values[index].lastSeen = now
            workers.values[index].completed += 1
        }
        var delivered = result
        delivered.taskKey = key
        return (chained.isEmpty ? delivered : chained.hold(delivered, from: peer), out + dispatch())
    }

    /// An adopted follow-on cancelled on its worker by its download's timeout cancel, which crossed the
    /// download's success (`Entry.crossedCancel`): sent again to that worker, where its input is, as a new
    /// attempt.
    mutating func resendCrossedFollowOn(_ key: TaskKey) {
        guard let entry = entries[key] else { return }
        requeue(key, entry, reason: .timedOut)
    }
}
