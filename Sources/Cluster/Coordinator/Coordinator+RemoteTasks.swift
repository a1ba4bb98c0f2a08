import Wire

/// The bridge between the batches' remote operations and the dispatcher: a remote operation's task goes
/// into the dispatcher's queue, its worker's result resumes the operation, and a cancelled item's tasks
/// are withdrawn.
extension Coordinator {
    /// Queues a task and suspends until a worker's result arrives (see `RemoteTaskRunning`).
    ///
    /// Nonisolated: the request is posted to `remoteRequests` without hopping onto the actor, and the
    /// result resumes the operation's task directly (not through the actor); `takeRemoteRequests()`
    /// queues the posted tasks in groups. The cancellation handler only marks the call: the coordinator
    /// cancels remote operations itself and withdraws their tasks at the same time (`withdraw`).
    nonisolated func run(
        _ assignment: TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey, avoiding: PeerIdentity?
    ) async throws -> TaskOutput {
        let call = RemoteCall()
        let inbox = remoteRequests
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                inbox.post(RemoteRequest(assignment: assignment, priority: priority, wasWaiting: wasWaiting,
                                         dependentKey: dependentKey, avoiding: avoiding, call: call,
                                         continuation: continuation)) {
                    Task { await self.takeRemoteRequests() }
                }
            }
        } onCancel: {
            call.cancel()
        }
    }

    /// Queues the tasks of remote operations, in the order posted; a call cancelled meanwhile (its item
    /// was cancelled) is answered at once.
    func takeRemoteRequests() {
        let requests = remoteRequests.drain()
        guard !requests.isEmpty else { return }
        sendingTogether {
            for request in requests {
                if request.wasWaiting { waitingTasks -= 1 }
                if request.call.isCancelled {
                    request.continuation.resume(throwing: CancellationError())
                    continue
                }
                waiters[request.assignment.taskKey] = request.continuation
                send(dispatcher.enqueue(request.assignment, priority: request.priority, dependentKey: request.dependentKey,
                                        avoiding: request.avoiding))
            }
        }
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
    /// worker (`CancelTask{task_key}`), and the operation waiting for it is resumed with `CancellationError`.
    func withdraw(_ keys: [TaskKey]) {
        for key in keys {
            waiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
            send(dispatcher.cancel(key: key, reason: "cancelled"))
        }
    }

    /// Resumes the remote operation waiting for `result` (whose `taskKey` the dispatcher has set), which
    /// came from `peer` when known (a retry avoids that worker). `workerID` names the worker for status
    /// when `peer` is no longer registered (an attempt lost with its worker).
    func deliver(_ result: TaskResult, from peer: PeerIdentity? = nil, workerID: String = "") {
        guard let waiter = waiters.removeValue(forKey: result.taskKey) else { return }
        switch result.outcome {
        case .output(let output): waiter.resume(returning: output)
        case .failure(let failure):
            waiter.resume(throwing: RemoteTaskError(
                failure: failure, attempt: result.attempt, worker: peer,
                workerID: peer.flatMap { dispatcher.workers[$0]?.workerID } ?? workerID))
        }
    }
}

/// The coordinator as its remote operations see it.
struct CoordinatorTaskRunner: RemoteTaskRunning {
    let coordinator: Coordinator
    func run(_ assignment: TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey,
             avoiding: PeerIdentity?) async throws -> TaskOutput {
        try await coordinator.run(assignment, priority: priority, wasWaiting: wasWaiting, dependentKey: dependentKey,
                                  avoiding: avoiding)
    }
    func recordFailedAttempt(_ attempt: AttemptStatus, itemIndex: Int, batchID: String) {
        coordinator.recordFailedAttempt(attempt, itemIndex: itemIndex, batchID: batchID)
    }
}
