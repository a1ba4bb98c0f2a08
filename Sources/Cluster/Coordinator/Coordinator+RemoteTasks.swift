import Wire

/// The bridge between the batches' remote operations and the dispatcher: a remote operation's task goes
/// into the dispatcher's queue, its worker's result finishes (or advances) the operation right here on the
/// actor, and a cancelled item's tasks are withdrawn.
extension Coordinator {
    /// Takes a remote operation's request (see `RemoteTaskRunning`). Nonisolated: it is posted to
    /// `remoteRequests` without hopping onto the actor; `takeRemoteRequests()` queues the posted tasks in
    /// groups, at the end of the current wake-up when posted during one (an operation started by a result),
    /// else in a task scheduled by the first post (a new batch's first items, started by the engine's runner
    /// that launched the batch's group): an immediate task, whose only step, the hop onto the actor, is
    /// taken on the posting thread, so that the job lands on the coordinator's thread without first waking
    /// a thread of Swift's pool.
    nonisolated func request(_ request: RemoteRequest) {
        remoteRequests.post(request) { Task.immediate { await self.takeRemoteRequests() } }
    }

    /// Queues the tasks of remote operations, in the order posted; a request of an operation cancelled
    /// meanwhile (its item was cancelled) is dropped. Returns whether there were any.
    @discardableResult
    func takeRemoteRequests() -> Bool {
        let requests = remoteRequests.drain()
        guard !requests.isEmpty else { return false }
        sendingTogether {
            for request in requests {
                if request.wasWaiting { waitingTasks -= 1 }
                if request.operation.isCancelled || request.operation.isFinished { continue }
                if let reason = request.resend { dispatcher.resends.record(reason) }
                waiters[request.assignment.taskKey] = request.operation
                send(dispatcher.enqueue(request.assignment, priority: request.priority, dependentKey: request.dependentKey,
                                        avoiding: request.avoiding, followOn: request.followOn?.value))
            }
        }
        remoteRequests.recycle(requests)
        return true
    }

    /// At the end of a wake-up (`sendingTogether`): queues the requests of the operations its results
    /// started and finishes the items they ended, until neither is left, so that the next tasks go out
    /// with the same send. While the wake-up's messages are handled (`draining`), posts to either inbox
    /// schedule no task: this drains them.
    func settleEngineWork(draining: Bool) {
        remoteRequests.ownerDrains = draining
        finishedItemInbox.ownerDrains = draining
        while takeRemoteRequests() || finishItems() {}
    }

    /// Journals a failed attempt (see `RemoteTaskRunning`). Nonisolated, as `run`: the operation does not
    /// wait for the actor; without a journal there is nothing to do.
    nonisolated func recordFailedAttempt(_ attempt: AttemptStatus, itemIndex: Int, batchID: String) {
        guard configuration.dataDirectory != nil else { return }
        Task { await self.journal(attempt, itemIndex: itemIndex, batchID: batchID) }
    }

    private func journal(_ attempt: AttemptStatus, itemIndex: Int, batchID: String) {
        do {
            try journal?.recordAttemptFailed(batchID: batchID, itemIndex: UInt32(clamping: itemIndex), attempt: attempt)
            try journal?.flush()  // now: with no worker left, nothing may be sent for a while
        } catch {
            logger.error("could not record a failed attempt in the journal; status after a restart will not show it",
                         metadata: ["batch": "\(batchID)", "item": "\(itemIndex)", "error": "\(error)"])
        }
    }

    /// Withdraws tasks from the cluster: each is dropped from the dispatcher's queue, or cancelled on its
    /// worker (`CancelTask{task_key}`), and the operation waiting for it finishes as cancelled (if the
    /// cancel of its item has not finished it already).
    func withdraw(_ keys: [TaskKey]) {
        for key in keys {
            waiters.removeValue(forKey: key)?.received(.failure(CancellationError()))
            send(dispatcher.cancel(key: key, reason: "cancelled"))
        }
    }

    /// Tells the remote operation waiting for `result` (whose `taskKey` the dispatcher has set), which
    /// came from `peer` when known (a retry avoids that worker); `workerID` names the worker for status
    /// when `peer` is no longer registered (an attempt lost with its worker; `lossReason`: the worker or
    /// only the assignment). The operation finishes here, and its dependents start (their requests are
    /// queued at the end of the wake-up).
    func deliver(_ result: TaskResult, from peer: PeerIdentity? = nil, workerID: String = "",
                 lossReason: TaskResends.Reason? = nil) {
        guard let waiter = waiters.removeValue(forKey: result.taskKey) else { return }
        switch result.outcome {
        case .output(let output): waiter.received(.success(output))
        case .failure(let failure):
            waiter.received(.failure(RemoteTaskError(
                failure: failure, attempt: result.attempt, worker: peer,
                workerID: peer.flatMap { dispatcher.workers[$0]?.workerID } ?? workerID, lossReason: lossReason)))
        }
    }
}

/// The coordinator as its remote operations see it.
struct CoordinatorTaskRunner: RemoteTaskRunning {
    let coordinator: Coordinator
    func request(_ request: RemoteRequest) {
        coordinator.request(request)
    }
    func recordFailedAttempt(_ attempt: AttemptStatus, itemIndex: Int, batchID: String) {
        coordinator.recordFailedAttempt(attempt, itemIndex: itemIndex, batchID: batchID)
    }
}
