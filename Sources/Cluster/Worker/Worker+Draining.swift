import Wire

/// A worker's graceful stop (`drain`): no new tasks, the running ones finished, then `stop()`.
extension Worker {
    /// Stops gracefully: takes no new tasks, finishes those it runs, then leaves. It waits for the last
    /// running task to finish, for at most `timeout` (without one: until then, or until `stop()`, as when
    /// its `ServiceGroup`'s graceful shutdown runs out of time). Tasks still running then are cancelled and
    /// the coordinator queues them again. Returns how many tasks finished while draining.
    @discardableResult
    public func drain(timeout: Duration? = nil) async -> Int {
        guard !isStopping, !isDraining else { return 0 }
        isDraining = true
        let holding = running.count
        logger.info("draining: finishing running tasks, taking no new ones", metadata: ["running": "\(holding)"])
        send(.workerGoodbye(WorkerGoodbye(workerID: configuration.workerID, draining: true)))
        if let timeout {
            // The deadline is a child of this call: it ends with it.
            await withDiscardingTaskGroup { group in
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    await self.wakeIdleWaiters()
                }
                await untilNoTaskRuns()
                group.cancelAll()
            }
        } else {
            await untilNoTaskRuns()
        }
        // Cut short by `stop()` (the group's deadline, a second signal): what it cancelled.
        let unfinished = isStopping ? tasksAbandoned : running.count
        logger.info("drained", metadata: ["finished": "\(holding - unfinished)", "abandoned": "\(unfinished)"])
        await stop()
        return holding - unfinished
    }

    /// Returns once no task runs, or `wakeIdleWaiters()` is called (deadline, `stop()`).
    func untilNoTaskRuns() async {
        guard !running.isEmpty, !isStopping else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Resumes whoever waits in `untilNoTaskRuns`.
    func wakeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Called after tasks leave `running`: the last one wakes a drain.
    func runningShrank() {
        if running.isEmpty { wakeIdleWaiters() }
    }
}
