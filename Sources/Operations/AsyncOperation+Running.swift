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
    /// With `launchIfReady` (the queue has reserved a slot for it), an operation that is ready at once is
    /// also launched in the same step (`.ready(_, launched: true)`; hand it to its runner pool).
    func attach(to queue: WorkQueue, slot: Int, fromGroup: Bool, launchIfReady: Bool = false) -> AttachResult {
        core.withLock { s in
            if s.queue != nil || (s.parent != nil && !fromGroup) || s.launched {
                return .rejected
            }
            if s.state.isTerminal { return .terminal }
            s.queue = queue
            s.queueSlot = slot
            guard s.unsatisfied == 0 && s.state == .pending && s.stop == nil else { return .pending }
            s.state = .ready
            guard launchIfReady else { return .ready(s.priority, launched: false) }
            s.launched = true
            s.holdsSlot = true
            return .ready(s.priority, launched: true)
        }
    }

    /// Starts running the operation: offered to `handoff` (of the runner finishing the operation that made
    /// this one ready, which then runs it next, whatever its priority: the cheap path for chains), or
    /// handed to the runner pool of its priority. Returns `false` if the operation finished meanwhile (then
    /// it did not take the queue slot).
    /// An external operation without conditions is started on this thread instead (``ExternalOperation``):
    /// after the finish in progress, by `handoff`'s owner, or at once without one; so is one whose only
    /// condition is a ``MutualExclusion`` with a free slot, and without one it waits in the exclusion's queue
    /// and is started by the release that frees a slot (no runner, no hop through Swift's pool).
    func launch(handoff: RunnerHandoff?) -> Bool {
        if startsExternally {
            // One lock for the claim and for how it starts (its conditions are read in the same step).
            guard let (priority, start) = claimExternalLaunch() else { return false }
            guard startsHere(priority: priority, start: start, handoff: handoff) else { return true }
            if let handoff {
                handoff.externalStarts.append(self)
            } else {
                startExternally()
            }
            return true
        }
        guard let priority = claimLaunch() else { return false }
        return launchOnRunner(priority, handoff: handoff)
    }

    /// Hands the operation to a runner of the pool of `priority` (`handoff`'s, to run next, if it takes it).
    private func launchOnRunner(_ priority: OperationPriority, handoff: RunnerHandoff?) -> Bool {
        let pool = RunnerPool.pool(for: priority)
        if let handoff, handoff.offer(self, pool: pool) { return true }
        pool.push(self)
        return true
    }

    /// Marks the operation launched, holding its queue slot; its priority, or `nil` if it finished meanwhile.
    func claimLaunch() -> OperationPriority? {
        core.withLock { s -> OperationPriority? in
            guard !s.state.isTerminal, !s.launched else { return nil }
            s.launched = true
            s.holdsSlot = true
            return s.priority
        }
    }

    /// How a launched external operation starts: at once (no conditions), once its only condition, a mutual
    /// exclusion, grants it a slot, or on a runner that evaluates its conditions.
    enum ExternalStart {
        case now
        case exclusive(MutualExclusion)
        case onRunner
    }

    var externalStart: ExternalStart { core.withLock { $0.externalStart } }

    /// ``claimLaunch()`` and ``externalStart`` in one step under the lock, for an external operation.
    func claimExternalLaunch() -> (OperationPriority, ExternalStart)? {
        core.withLock { s -> (OperationPriority, ExternalStart)? in
            guard !s.state.isTerminal, !s.launched else { return nil }
            s.launched = true
            s.holdsSlot = true
            return (s.priority, s.externalStart)
        }
    }

    /// For a launched external operation: `true` when it is to be started on this thread now; `false` when
    /// it waits in its exclusion's queue (started when granted) or has gone to a runner for its conditions.
    /// `start` is its ``externalStart``, when the caller read it already.
    func startsHere(priority: OperationPriority, start: ExternalStart? = nil, handoff: RunnerHandoff?) -> Bool {
        switch start ?? externalStart {
        case .now:
            return true
        case .exclusive(let exclusion):
            return exclusion.acquireOrQueue(self)
        case .onRunner:
            _ = launchOnRunner(priority, handoff: handoff)
            return false
        }
    }

    /// Runs the operation on `runner`'s task: its conditions, then `execute()` (with retries and the
    /// timeout), then finishes it. Returns at once if the operation finished meanwhile (cancelled while it
    /// waited for a runner).
    func run(on runner: OperationRunner, handoff: RunnerHandoff) async {
        enum Start {
            case finished
            /// No condition, timeout or retry policy: the common case, in as few steps as possible.
            case execute([any OperationObserver])
            case evaluate([any OperationCondition])
            case executeWithLimits(Execution)
            /// An external operation: started here, finished from outside (no timeout or retries).
            case external
        }
        let external = startsExternally
        let start = core.withLock { s -> Start in
            if s.state.isTerminal || s.stop != nil { return .finished }
            s.runner = runner
            if external {
                // (Launched to a runner for its conditions, or by a queue that had no thread to start it on.)
                if let conditions = s.extras?.conditions, !conditions.isEmpty { return .evaluate(conditions) }
                s.runner = nil
                return .external
            }
            guard let extras = s.extras else {
                s.state = .executing
                s.attempt = 1
                return .execute(s.observers)
            }
            if !extras.conditions.isEmpty { return .evaluate(extras.conditions) }
            if extras.timeout == nil && extras.retryPolicy == nil {
                s.state = .executing
                s.attempt = 1
                return .execute(s.observers)
            }
            return .executeWithLimits(s.beginExecution())
        }
        let execution: Execution
        switch start {
        case .finished:
            return
        case .external:
            return startExternally()
        case .execute(let observers):
            for observer in observers { observer.operationWillExecute(self) }
            let outcome: (OperationState, [any Error])
            do {
                try await execute()
                outcome = (.finished, [])
            } catch {
                outcome = AsyncOperation.outcome(of: error)
            }
            return finish(outcome, handoff: handoff)
        case .executeWithLimits(let started):
            execution = started
        case .evaluate(let conditions):
            guard let started = await evaluate(conditions, handoff: handoff) else { return }
            if external { return startExternally() }
            execution = started
        }
        for observer in execution.observers { observer.operationWillExecute(self) }
        var timer: Task<Void, Never>?
        if let timeout = execution.timeout {
            timer = Task.detached { [weak self] in
                try? await Task.sleep(for: timeout)
                if Task.isCancelled { return }
                self?.timeoutElapsed(timeout)
            }
        }
        let outcome = await executeWithRetries(execution.retryPolicy)
        timer?.cancel()
        finish(outcome, handoff: handoff)
    }

    /// Finishes the operation after `execute()` ended with `outcome`; a cancellation or timeout recorded
    /// meanwhile decides instead (see `commitFinish`).
    private func finish(_ outcome: (OperationState, [any Error]), handoff: RunnerHandoff) {
        AsyncOperation.finishAll(
            PendingFinish(operation: self, state: outcome.0, errors: outcome.1, stopDecides: true), handoff: handoff)
    }

    /// How an operation whose `execute()` threw `error` ends: failed with it (with each of a
    /// ``MultipleErrors``), or cancelled for a `CancellationError`.
    static func outcome(of error: any Error) -> (OperationState, [any Error]) {
        let errors = (error as? MultipleErrors)?.errors ?? [error]
        if errors.count == 1 && errors[0] is CancellationError { return (.cancelled, []) }
        return (.failed, errors)
    }

    /// Evaluates the conditions in order (mutual exclusions last, by category) and starts executing if they
    /// hold; `nil` if the operation finished instead (a condition failed, or it was cancelled meanwhile:
    /// cancellation finishes it at once, without waiting for the condition).
    private func evaluate(_ conditions: [any OperationCondition], handoff: RunnerHandoff) async -> Execution? {
        let exclusions = conditions.compactMap { $0 as? MutualExclusion }.sorted { $0.category < $1.category }
        let ordered = conditions.filter { !($0 is MutualExclusion) } + exclusions.map { $0 as any OperationCondition }
        for condition in ordered {
            do {
                try await condition.evaluate(for: self)
            } catch {
                let failure = ConditionFailedError(condition: condition.name, operation: name, underlyingError: error)
                AsyncOperation.finishAll(
                    PendingFinish(operation: self, state: .failed, errors: [failure], stopDecides: true),
                    handoff: handoff)
                return nil
            }
        }
        let external = startsExternally
        return core.withLock { s -> Execution? in
            if s.state.isTerminal || s.stop != nil { return nil }
            if external {
                s.runner = nil  // `startExternally` moves it to executing
                return Execution(observers: [], timeout: nil, retryPolicy: nil)
            }
            return s.beginExecution()
        }
    }

    /// Calls `execute()`, again after a backoff while the retry policy allows; returns how it ended.
    private func executeWithRetries(_ retry: RetryPolicy?) async -> (OperationState, [any Error]) {
        var attempt = 1
        while true {
            do {
                try await execute()
                return (.finished, [])
            } catch {
                if let retry, attempt < retry.maxAttempts, !(error is CancellationError), !Task.isCancelled,
                    retry.shouldRetry(error), !core.withLock({ $0.stop != nil })
                {
                    do {
                        try await Task.sleep(for: retry.delay(afterAttempt: attempt, error: error))
                    } catch {
                        return (.failed, [error])
                    }
                    attempt += 1
                    let next = attempt
                    core.withLock { $0.attempt = next }
                    continue
                }
                return AsyncOperation.outcome(of: error)
            }
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
    /// Ready; `launched` if it was also launched on a queue slot reserved for it.
    case ready(OperationPriority, launched: Bool)
}

/// Why an operation must stop; the first one recorded wins.
enum StopReason {
    case cancelled([any Error])
    /// (The ``OperationTimeoutError``, boxed: a stop reason stays one word wide.)
    case timedOut(any Error)

    /// How an operation stopped for this reason ends: cancelled with the cancellation's errors, or failed
    /// with the timeout error.
    var outcome: (OperationState, [any Error]) {
        switch self {
        case .cancelled(let errors): return (.cancelled, errors)
        case .timedOut(let error): return (.failed, [error])
        }
    }
}

extension OperationCore {
    /// How an external operation starts, from its conditions (see ``AsyncOperation/ExternalStart``).
    var externalStart: AsyncOperation.ExternalStart {
        guard let conditions = extras?.conditions, !conditions.isEmpty else { return .now }
        if conditions.count == 1, let exclusion = conditions[0] as? MutualExclusion { return .exclusive(exclusion) }
        return .onRunner
    }
}

/// What an operation needs when it starts executing, read under its lock.
struct Execution {
    let observers: [any OperationObserver]
    let timeout: Duration?
    let retryPolicy: RetryPolicy?
}

extension OperationCore {
    /// Moves the operation to executing (its first attempt).
    mutating func beginExecution() -> Execution {
        state = .executing
        attempt = 1
        return Execution(observers: observers, timeout: timeout, retryPolicy: retryPolicy)
    }
}
