// Running an operation, driven by its WorkQueue: attaching it to the queue, launching it on an
// OperationRunner's task, then evaluating its conditions and calling `execute()` (with its timeout and
// retries) until it finishes.

extension AsyncOperation {
    /// Gives the operation's queue slot back while it keeps running (a group waiting for its children
    /// does no work of its own and must not starve operations its children wait for).
    func releaseQueueSlot() {
        let queue = core.withLock { s -> WorkQueue? in
            guard s.holdsSlot, let queue = s.queue else { return nil }
            s.holdsSlot = false
            return queue
        }
        queue?.slotReleased()
    }

    /// Attaches the operation to `queue`. Called by the queue with its own bookkeeping already done.
    func attach(to queue: WorkQueue, slot: Int, fromGroup: Bool) -> AttachResult {
        core.withLock { s in
            if s.queue != nil || (s.parent != nil && !fromGroup) || s.launched {
                return .rejected
            }
            if s.state.isTerminal { return .terminal }
            s.queue = queue
            s.queueSlot = slot
            if s.unsatisfied == 0 && s.state == .pending && s.stop == nil {
                s.state = .ready
                return .ready(s.priority)
            }
            return .pending
        }
    }

    /// Starts running the operation: handed to `runner` (the task that is finishing a previous
    /// operation, which then runs this one next instead of ending), or on a new task. Returns `false` if
    /// the operation finished meanwhile (then it did not take the queue slot).
    func launch(runner: OperationRunner?) -> Bool {
        let priority = core.withLock { s -> OperationPriority? in
            guard !s.state.isTerminal, !s.launched else { return nil }
            s.launched = true
            s.holdsSlot = true
            return s.priority
        }
        guard let priority else { return false }
        if let runner, runner.offer(self) {
            core.withLock { $0.runner = runner }
        } else {
            startOnNewTask(priority: priority)
        }
        return true
    }

    /// Runs the operation on a new task with its own runner.
    fileprivate func startOnNewTask(priority: OperationPriority) {
        let runner = OperationRunner()
        core.withLock { $0.runner = runner }
        let task = Task.detached(priority: priority.taskPriority) { await AsyncOperation.work(self, runner) }
        runner.attach(task)
        let cancelNow = core.withLock { s in !s.state.isTerminal && s.stop != nil }
        if cancelNow { task.cancel() }
    }

    /// The body of a task: runs `first`, then each operation handed over while finishing the previous
    /// one, as long as nobody cancelled the task (cancellation is sticky: a cancelled task is never reused).
    fileprivate static func work(_ first: AsyncOperation, _ runner: OperationRunner) async {
        var operation = first
        while true {
            await operation.run(runner: runner)
            guard let next = runner.takeNext() else { break }
            if Task.isCancelled || runner.hasCancellationInFlight {
                let priority = next.core.withLock { $0.priority }
                next.startOnNewTask(priority: priority)
                break
            }
            operation = next
        }
        runner.detach()
    }

    fileprivate func run(runner: OperationRunner) async {
        let conditions = core.withLock { s -> [any OperationCondition]? in
            if s.state.isTerminal || s.stop != nil { return nil }
            return s.conditions
        }
        guard let conditions else { return finishFromStop(runner: runner) }
        if !conditions.isEmpty {
            let exclusions = conditions.compactMap { $0 as? MutualExclusion }.sorted { $0.category < $1.category }
            let ordered = conditions.filter { !($0 is MutualExclusion) } + exclusions.map { $0 as any OperationCondition }
            for condition in ordered {
                do {
                    try await condition.evaluate(for: self)
                } catch {
                    if stopRequested || Task.isCancelled { return finishFromStop(runner: runner) }
                    let failure = ConditionFailedError(condition: condition.name, operation: name, underlyingError: error)
                    return AsyncOperation.finishAll(PendingFinish(operation: self, state: .failed, errors: [failure]), runner: runner)
                }
            }
        }
        let start = core.withLock { s -> (observers: [any OperationObserver], timeout: Duration?, retry: RetryPolicy?)? in
            if s.state.isTerminal || s.stop != nil { return nil }
            s.state = .executing
            s.attempt = 1
            return (s.observers, s.timeout, s.retryPolicy)
        }
        guard let start else { return finishFromStop(runner: runner) }
        for observer in start.observers { observer.operationWillExecute(self) }

        var timer: Task<Void, Never>?
        if let timeout = start.timeout {
            timer = Task.detached { [weak self] in
                try? await Task.sleep(for: timeout)
                if Task.isCancelled { return }
                self?.timeoutElapsed(timeout)
            }
        }
        var failure: [any Error]?
        var attempt = 1
        while true {
            do {
                try await execute()
                failure = nil
                break
            } catch {
                if stopRequested { break }
                if let retry = start.retry, attempt < retry.maxAttempts, !(error is CancellationError),
                    !Task.isCancelled, retry.shouldRetry(error)
                {
                    do {
                        try await Task.sleep(for: retry.delay(afterAttempt: attempt))
                    } catch {
                        failure = [error]
                        break
                    }
                    attempt += 1
                    let next = attempt
                    core.withLock { $0.attempt = next }
                    continue
                }
                if let multiple = error as? MultipleErrors {
                    failure = multiple.errors
                } else {
                    failure = [error]
                }
                break
            }
        }
        timer?.cancel()
        if stopRequested { return finishFromStop(runner: runner) }
        if let failure {
            let cancelled = failure.count == 1 && failure[0] is CancellationError
            AsyncOperation.finishAll(
                PendingFinish(operation: self, state: cancelled ? .cancelled : .failed, errors: cancelled ? [] : failure), runner: runner)
        } else {
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .finished, errors: []), runner: runner)
        }
    }

    private var stopRequested: Bool { core.withLock { $0.stop != nil } }

    private func finishFromStop(runner: OperationRunner) {
        let stop = core.withLock { $0.stop }
        switch stop {
        case .timedOut(let error):
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .failed, errors: [error]), runner: runner)
        case .cancelled(let errors):
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .cancelled, errors: errors), runner: runner)
        case nil:
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .cancelled, errors: []), runner: runner)
        }
    }

    private func timeoutElapsed(_ timeout: Duration) {
        let error = OperationTimeoutError(operation: name, timeout: timeout)
        let runner = core.withLock { s -> OperationRunner?? in
            guard s.state == .executing, s.stop == nil else { return nil }
            s.stop = .timedOut(error)
            s.runner?.cancellationWillBegin()
            return .some(s.runner)
        }
        guard let runner else { return }
        cancellationRequested(errors: [error])
        runner?.cancelTask()
    }
}

/// What `WorkQueue.addOperation` learns from ``AsyncOperation/attach(to:slot:fromGroup:)``.
enum AttachResult {
    case rejected
    case terminal
    case pending
    case ready(OperationPriority)
}

/// Why a launched operation must stop; the first one recorded wins.
enum StopReason {
    case cancelled([any Error])
    case timedOut(OperationTimeoutError)
}
