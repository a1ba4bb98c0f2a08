/// A unit of asynchronous work with a lifecycle, dependencies, conditions, observers and cancellation.
///
/// This is the engine's counterpart of Foundation's `Operation`, built on Swift concurrency (it is
/// named `AsyncOperation` so that it never clashes with Foundation's type when both are imported).
/// Subclass it and override ``execute()``, or use ``AsyncBlockOperation``, ``ResultOperation``,
/// ``TransformOperation``, ``CompletableOperation`` or ``GroupOperation``. Run it by adding it to a
/// ``WorkQueue``.
///
/// Lifecycle: ``OperationState/pending`` → ``OperationState/ready`` (every dependency finished) →
/// ``OperationState/executing`` (a queue slot is free and every condition holds) → one terminal state:
/// ``OperationState/finished`` when `execute()` returns, ``OperationState/failed`` when it throws, or
/// ``OperationState/cancelled``. Finishing happens exactly once: the first cause wins, later ones are
/// ignored. `execute()` is `async`: returning from it *is* finishing, so there is no state to manage by
/// hand (unlike Foundation's asynchronous operations).
///
/// Cancellation (``cancel(error:)``) finishes an operation that has not started at once; for a running
/// one it cancels the Swift `Task` running `execute()` and the operation finishes as cancelled when
/// `execute()` returns or throws.
///
/// Thread safety: every mutable property lives in one lock (``LockedValue``) per operation; no lock is held while
/// user code (execute, observers, conditions, injection closures, completion handlers) runs, and no
/// lock is ever held across a suspension point. That discipline is why the class is
/// `@unchecked Sendable`. Subclasses that add mutable state must protect it likewise (a ``LockedValue``, or a
/// value written before the operation is enqueued and only read afterwards).
open class AsyncOperation: @unchecked Sendable, CustomStringConvertible {
    /// A process-wide unique identifier, increasing in creation order.
    public let id: UInt64
    let core: LockedValue<OperationCore>

    /// Creates a pending operation.
    /// - Parameters:
    ///   - name: a name for diagnostics (cycle errors, logs); defaults to `"<TypeName>#<id>"`.
    ///   - priority: the scheduling priority inside its queue.
    public init(name: String? = nil, priority: OperationPriority = .normal) {
        id = operationIDCounter.withLock { counter in
            counter += 1
            return counter
        }
        core = LockedValue(OperationCore(name: name, priority: priority))
    }

    /// Releases the dependency edges iteratively: freeing the last operation of a long chain must not
    /// recurse once per link (which would overflow the stack).
    deinit {
        var pending = core.withLock { s -> [AsyncOperation] in
            let operations = s.edges.map(\.operation)
            s.edges = []
            return operations
        }
        while var operation = pending.popLast() {
            if isKnownUniquelyReferenced(&operation) {
                let more = operation.core.withLock { s -> [AsyncOperation] in
                    let operations = s.edges.map(\.operation)
                    s.edges = []
                    return operations
                }
                pending.append(contentsOf: more)
            }
        }
    }

    // MARK: - Work

    /// The work. Override it in a subclass; the default implementation does nothing.
    ///
    /// Return normally to finish successfully; throw to fail (with the error as ``errors``; throw a
    /// ``MultipleErrors`` to report several). It runs on its own task, which is cancelled when the
    /// operation is cancelled or times out: check `Task.isCancelled` or call `Task.checkCancellation()`
    /// in long loops. It may suspend for as long as it likes, for example until a network reply
    /// arrives (see ``CompletableOperation``). With a ``retryPolicy`` it can be called more than once
    /// (see ``attempt``).
    open func execute() async throws {}

    // MARK: - Properties

    /// The name used in diagnostics. Defaults to `"<TypeName>#<id>"`.
    public var name: String {
        get {
            if let name = core.withLock({ $0.name }) { return name }
            return "\(type(of: self))#\(id)"
        }
        set { core.withLock { $0.name = newValue } }
    }

    /// The scheduling priority; changes after the operation became ready have no effect.
    public var priority: OperationPriority {
        get { core.withLock { $0.priority } }
        set { core.withLock { $0.priority = newValue } }
    }

    /// The current lifecycle state.
    public var state: OperationState { core.withLock { $0.state } }

    /// The errors the operation finished with: what `execute()` threw, the error passed to
    /// ``cancel(error:)``, a ``ConditionFailedError``, an ``OperationTimeoutError``, a
    /// ``DependencyFailedError`` or ``InjectionError``, or a group's failed children's errors.
    /// Empty while the operation runs and after a plain success.
    public var errors: [any Error] { core.withLock { $0.errors } }

    /// `true` once cancellation was requested (even while a running `execute()` winds down) and after
    /// finishing as cancelled.
    public var isCancelled: Bool {
        core.withLock { s in
            if case .cancelled = s.stop { return true }
            return s.state == .cancelled
        }
    }

    /// `true` in any terminal state (finished, cancelled or failed), as with Foundation.
    public var isFinished: Bool { core.withLock { $0.state.isTerminal } }

    /// `true` while `execute()` runs.
    public var isExecuting: Bool { core.withLock { $0.state == .executing } }

    /// The current attempt, 1-based (0 before the first one). Greater than 1 only with a ``retryPolicy``.
    public var attempt: Int { core.withLock { $0.attempt } }

    /// If set, the operation fails with ``OperationTimeoutError`` when `execute()` has not finished this
    /// long after it started (its task is cancelled). Set it before the operation is enqueued.
    public var timeout: Duration? {
        get { core.withLock { $0.timeout } }
        set { core.withLock { $0.timeout = newValue } }
    }

    /// If set, `execute()` is retried with backoff when it throws. Set it before the operation is enqueued.
    public var retryPolicy: RetryPolicy? {
        get { core.withLock { $0.retryPolicy } }
        set { core.withLock { $0.retryPolicy = newValue } }
    }

    /// A description with the name and state, for logs.
    public var description: String { "\(name) [\(state)]" }

    // MARK: - Observers, conditions, completion

    /// Adds an observer; see ``OperationObserver`` for when and where each method is called.
    /// Observers added after the operation finished are never called.
    public func addObserver(_ observer: any OperationObserver) {
        core.withLock { s in
            if !s.state.isTerminal { s.observers.append(observer) }
        }
    }

    /// Adds a condition, evaluated after the dependencies and before `execute()`. Add conditions before
    /// enqueueing the operation; conditions added once it is ready are ignored.
    public func addCondition(_ condition: any OperationCondition) {
        core.withLock { s in
            if s.state == .pending { s.conditions.append(condition) }
        }
    }

    /// Registers a completion handler that runs **synchronously on the thread that finished the
    /// operation** (the task that ran it, or the thread that called `cancel` on an operation that had not
    /// started), after the observers and before the dependents are released. Keep it short and
    /// non-blocking. If the operation has already finished, the handler runs at once on the caller's
    /// thread.
    public func onCompletion(_ handler: @escaping @Sendable (AsyncOperation) -> Void) {
        let runNow = core.withLock { s -> Bool in
            if s.state.isTerminal { return true }
            s.completions.append(handler)
            return false
        }
        if runNow { handler(self) }
    }

    /// Registers a completion handler that runs **isolated to `actor`**, i.e. on that actor's executor,
    /// in a new task started when the operation finishes, for example a custom actor that owns the state
    /// the handler updates. (For the main actor, ``onMainActorCompletion(_:)`` gives a `@MainActor`
    /// closure.) There is no ordering between this handler and the start of the dependents.
    public func onCompletion<A: Actor>(
        isolatedTo actor: A,
        _ handler: @escaping @Sendable (isolated A, AsyncOperation) -> Void
    ) {
        onCompletion { operation in
            Task { await handler(actor, operation) }
        }
    }

    /// Registers a completion handler that runs **on the main actor** (the seeds' "called on the main
    /// thread"), in a new task started when the operation finishes. There is no ordering between this
    /// handler and the start of the dependents. (On Linux the main actor runs only while the main thread
    /// serves it: an `async` `main`, `dispatchMain()` or a run loop.)
    public func onMainActorCompletion(_ handler: @escaping @MainActor @Sendable (AsyncOperation) -> Void) {
        onCompletion { operation in
            Task { @MainActor in handler(operation) }
        }
    }

    /// Suspends until the operation reaches a terminal state. Returns early, without waiting, if the
    /// waiting task is cancelled.
    public func waitUntilFinished() async {
        let waiterID = core.withLock { s -> UInt64 in
            s.nextWaiterID &+= 1
            return s.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = core.withLock { s -> Bool in
                    if s.state.isTerminal || Task.isCancelled { return true }
                    s.waiters.append((waiterID, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = core.withLock { s -> CheckedContinuation<Void, Never>? in
                guard let index = s.waiters.firstIndex(where: { $0.0 == waiterID }) else { return nil }
                return s.waiters.remove(at: index).1
            }
            continuation?.resume()
        }
    }

    // MARK: - Cancellation

    /// Cancels the operation. The first call wins; later calls, and calls after the operation finished,
    /// do nothing.
    ///
    /// An operation that has not started finishes at once as ``OperationState/cancelled``; a running one
    /// has the task running its `execute()` cancelled and finishes as cancelled when `execute()` returns.
    /// `error`, if given, becomes the operation's ``errors`` and is passed to observers. A group cancels
    /// all of its children with the same error.
    public func cancel(error: (any Error)? = nil) {
        if let pending = requestCancel(errors: error.map { [$0] } ?? []) {
            AsyncOperation.finishAll(pending)
        }
    }

    /// Records the cancellation; returns the finish to perform for an operation that has not started.
    func requestCancel(errors: [any Error]) -> PendingFinish? {
        enum Action { case none, finishNow, cancelTask(Worker?) }
        let (action, observers) = core.withLock { s -> (Action, [any OperationObserver]) in
            if s.state.isTerminal || s.stop != nil { return (.none, []) }
            s.stop = .cancelled(errors)
            if !s.launched { return (.finishNow, s.observers) }
            s.worker?.cancellationWillBegin()
            return (.cancelTask(s.worker), s.observers)
        }
        switch action {
        case .none:
            return nil
        case .finishNow:
            for observer in observers { observer.operationDidCancel(self, errors: errors) }
            cancellationRequested(errors: errors)
            return PendingFinish(operation: self, state: .cancelled, errors: errors)
        case .cancelTask(let worker):
            for observer in observers { observer.operationDidCancel(self, errors: errors) }
            cancellationRequested(errors: errors)
            worker?.cancelTask()
            return nil
        }
    }

    /// Called once, right after cancellation was requested and before the operation finishes.
    /// ``GroupOperation`` overrides it to cancel its children.
    func cancellationRequested(errors: [any Error]) {}

    /// Runs `action` when the operation finishes (used to release mutual-exclusion slots); at once if it
    /// has already finished.
    func addFinishAction(_ action: @escaping @Sendable () -> Void) {
        let runNow = core.withLock { s -> Bool in
            if s.state.isTerminal { return true }
            s.finishActions.append(action)
            return false
        }
        if runNow { action() }
    }

    func observersSnapshot() -> [any OperationObserver] { core.withLock { $0.observers } }

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

    // MARK: - Running (driven by WorkQueue)

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

    /// Starts running the operation: handed to `worker` (the task that is finishing a previous
    /// operation, which then runs this one next instead of ending), or on a new task. Returns `false` if
    /// the operation finished meanwhile (then it did not take the queue slot).
    func launch(worker: Worker?) -> Bool {
        let priority = core.withLock { s -> OperationPriority? in
            guard !s.state.isTerminal, !s.launched else { return nil }
            s.launched = true
            s.holdsSlot = true
            return s.priority
        }
        guard let priority else { return false }
        if let worker, worker.offer(self) {
            core.withLock { $0.worker = worker }
        } else {
            startOnNewTask(priority: priority)
        }
        return true
    }

    /// Runs the operation on a new task with its own worker.
    private func startOnNewTask(priority: OperationPriority) {
        let worker = Worker()
        core.withLock { $0.worker = worker }
        let task = Task.detached(priority: priority.taskPriority) { await AsyncOperation.work(self, worker) }
        worker.attach(task)
        let cancelNow = core.withLock { s in !s.state.isTerminal && s.stop != nil }
        if cancelNow { task.cancel() }
    }

    /// The body of a task: runs `first`, then each operation handed over while finishing the previous
    /// one, as long as nobody cancelled the task (cancellation is sticky: a cancelled task is never reused).
    private static func work(_ first: AsyncOperation, _ worker: Worker) async {
        var operation = first
        while true {
            await operation.run(worker: worker)
            guard let next = worker.takeNext() else { break }
            if Task.isCancelled || worker.hasCancellationInFlight {
                let priority = next.core.withLock { $0.priority }
                next.startOnNewTask(priority: priority)
                break
            }
            operation = next
        }
        worker.detach()
    }

    private func run(worker: Worker) async {
        let conditions = core.withLock { s -> [any OperationCondition]? in
            if s.state.isTerminal || s.stop != nil { return nil }
            return s.conditions
        }
        guard let conditions else { return finishFromStop(worker: worker) }
        if !conditions.isEmpty {
            let exclusions = conditions.compactMap { $0 as? MutualExclusion }.sorted { $0.category < $1.category }
            let ordered = conditions.filter { !($0 is MutualExclusion) } + exclusions.map { $0 as any OperationCondition }
            for condition in ordered {
                do {
                    try await condition.evaluate(for: self)
                } catch {
                    if stopRequested || Task.isCancelled { return finishFromStop(worker: worker) }
                    let failure = ConditionFailedError(condition: condition.name, operation: name, underlyingError: error)
                    return AsyncOperation.finishAll(PendingFinish(operation: self, state: .failed, errors: [failure]), worker: worker)
                }
            }
        }
        let start = core.withLock { s -> (observers: [any OperationObserver], timeout: Duration?, retry: RetryPolicy?)? in
            if s.state.isTerminal || s.stop != nil { return nil }
            s.state = .executing
            s.attempt = 1
            return (s.observers, s.timeout, s.retryPolicy)
        }
        guard let start else { return finishFromStop(worker: worker) }
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
                        try await Task.sleep(for: retry.delay(afterAttempt: attempt, error: error))
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
        if stopRequested { return finishFromStop(worker: worker) }
        if let failure {
            let cancelled = failure.count == 1 && failure[0] is CancellationError
            AsyncOperation.finishAll(
                PendingFinish(operation: self, state: cancelled ? .cancelled : .failed, errors: cancelled ? [] : failure), worker: worker)
        } else {
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .finished, errors: []), worker: worker)
        }
    }

    private var stopRequested: Bool { core.withLock { $0.stop != nil } }

    private func finishFromStop(worker: Worker) {
        let stop = core.withLock { $0.stop }
        switch stop {
        case .timedOut(let error):
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .failed, errors: [error]), worker: worker)
        case .cancelled(let errors):
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .cancelled, errors: errors), worker: worker)
        case nil:
            AsyncOperation.finishAll(PendingFinish(operation: self, state: .cancelled, errors: []), worker: worker)
        }
    }

    private func timeoutElapsed(_ timeout: Duration) {
        let error = OperationTimeoutError(operation: name, timeout: timeout)
        let worker = core.withLock { s -> Worker?? in
            guard s.state == .executing, s.stop == nil else { return nil }
            s.stop = .timedOut(error)
            s.worker?.cancellationWillBegin()
            return .some(s.worker)
        }
        guard let worker else { return }
        cancellationRequested(errors: [error])
        worker?.cancelTask()
    }

    // MARK: - Finishing

    /// Finishes `first` and, iteratively, every dependent that must be cancelled as a consequence (so a
    /// cancellation cascading down a long chain never recurses deeply).
    /// `worker`, if given, is the task finishing the operation; it may take over a dependent that
    /// becomes ready.
    static func finishAll(_ first: PendingFinish, worker: Worker? = nil) {
        var work = [first]
        while let item = work.popLast() {
            item.operation.commitFinish(state: item.state, errors: item.errors, cascade: &work, worker: worker)
        }
    }

    private func commitFinish(state final: OperationState, errors: [any Error], cascade: inout [PendingFinish], worker: Worker?) {
        let snapshot = core.withLock { s -> FinishSnapshot? in
            guard !s.state.isTerminal else { return nil }
            s.state = final
            s.errors = errors
            var snapshot = FinishSnapshot(
                dependents: s.dependents, waiters: s.waiters, observers: s.observers,
                completions: s.completions, finishActions: s.finishActions, queue: s.queue,
                queueSlot: s.queueSlot, holdsSlot: s.holdsSlot, parent: s.parent
            )
            s.dependents = []
            s.waiters = []
            s.observers = []
            s.completions = []
            s.finishActions = []
            s.conditions = []
            s.queue = nil
            s.parent = nil
            s.worker = nil
            if s.hasInjections {
                for index in s.edges.indices { s.edges[index].injection = nil }
                s.hasInjections = false
            }
            if s.unsatisfied > 0 {
                // Finished early (cancelled): unlink from the dependencies still running, so that they do
                // not keep this operation alive.
                snapshot.unfinishedDependencies = s.edges.compactMap { ($0.removed || $0.satisfied) ? nil : $0.operation }
            }
            return snapshot
        }
        guard let snapshot else { return }
        for dependency in snapshot.unfinishedDependencies {
            dependency.core.withLock { s in s.dependents.removeAll { $0.operation === self } }
        }
        for action in snapshot.finishActions { action() }
        for observer in snapshot.observers { observer.operationDidFinish(self, state: final, errors: errors) }
        for completion in snapshot.completions { completion(self) }
        for link in snapshot.dependents {
            if let next = link.operation.dependencyDidFinish(slot: link.slot, dependency: self, state: final, errors: errors, worker: worker) {
                cascade.append(next)
            }
        }
        snapshot.parent?.childFinished(self, state: final, errors: errors)
        snapshot.queue?.operationDidFinish(slot: snapshot.queueSlot, heldSlot: snapshot.holdsSlot, worker: worker)
        for waiter in snapshot.waiters { waiter.1.resume() }
    }
}

/// The process-wide counter behind ``AsyncOperation/id``.
let operationIDCounter = LockedValue<UInt64>(0)

/// A finish to perform (see ``AsyncOperation/finishAll(_:)``).
struct PendingFinish {
    let operation: AsyncOperation
    let state: OperationState
    let errors: [any Error]
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

/// A dependency edge stored in the dependent. Slots are never reused, so a dependency can notify its
/// dependent by slot index in O(1).
struct DependencyEdge {
    let operation: AsyncOperation
    var policy: DependencyPolicy
    var injection: Injection?
    var satisfied: Bool
    var removed: Bool
}

/// A result-injection step run when the dependency has finished and before the dependent may start.
struct Injection: Sendable {
    /// `true` for ``ResultConsuming/injectResult(from:)``: a failed dependency yields an InjectionError.
    let automatic: Bool
    let deliver: @Sendable (_ dependent: AsyncOperation, _ dependency: AsyncOperation) throws -> Void
}

/// A link stored in the dependency: "this dependent waits for me through its edge `slot`".
struct DependentLink {
    let operation: AsyncOperation
    let slot: Int
}

/// What `commitFinish` takes out of the lock.
struct FinishSnapshot {
    let dependents: [DependentLink]
    let waiters: [(UInt64, CheckedContinuation<Void, Never>)]
    let observers: [any OperationObserver]
    let completions: [@Sendable (AsyncOperation) -> Void]
    let finishActions: [@Sendable () -> Void]
    let queue: WorkQueue?
    let queueSlot: Int
    let holdsSlot: Bool
    let parent: GroupOperation?
    var unfinishedDependencies: [AsyncOperation] = []
}

/// All mutable state of one operation, guarded by its lock.
struct OperationCore {
    var state: OperationState = .pending
    var name: String?
    var priority: OperationPriority
    var errors: [any Error] = []
    var attempt = 0
    var timeout: Duration?
    var retryPolicy: RetryPolicy?

    var edges: [DependencyEdge] = []
    var hasInjections = false
    var unsatisfied = 0
    var dependents: [DependentLink] = []

    var queue: WorkQueue?
    var queueSlot = -1
    var parent: GroupOperation?
    var launched = false
    var holdsSlot = false
    var worker: Worker?
    var stop: StopReason?

    var observers: [any OperationObserver] = []
    var conditions: [any OperationCondition] = []
    var completions: [@Sendable (AsyncOperation) -> Void] = []
    var finishActions: [@Sendable () -> Void] = []
    var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
    var nextWaiterID: UInt64 = 0

    init(name: String?, priority: OperationPriority) {
        self.name = name
        self.priority = priority
    }
}

/// The task that runs operations, one after another: when an operation finishes and makes a dependent
/// ready, the same task runs that dependent next instead of a new task being created (the cheap path for
/// chains). A cancellation of the operation it runs cancels the task; a cancelled task, or one with a
/// cancellation in flight, is never reused.
final class Worker: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var next: AsyncOperation?
        /// A cancellation arrived before the task handle was attached.
        var cancelRequested = false
        /// Cancellations that have decided to cancel this task but may not have done it yet.
        var cancellationsInFlight = 0
    }

    // Lock order: an operation's lock, then a worker's lock (never the other way round).
    private let state = LockedValue(State())

    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { s -> Bool in
            s.task = task
            return s.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    /// Drops the task handle (which refers back to this worker) when the task ends.
    func detach() { state.withLock { $0.task = nil } }

    /// Takes `operation` to run next, if the worker has no other one yet.
    func offer(_ operation: AsyncOperation) -> Bool {
        state.withLock { s in
            guard s.next == nil else { return false }
            s.next = operation
            return true
        }
    }

    func takeNext() -> AsyncOperation? {
        state.withLock { s in
            let next = s.next
            s.next = nil
            return next
        }
    }

    /// Called under the operation's lock before `cancelTask()`, so that the worker, which checks
    /// ``hasCancellationInFlight`` after the operation finished (under the same lock), never reuses a
    /// task that is about to be cancelled.
    func cancellationWillBegin() { state.withLock { $0.cancellationsInFlight += 1 } }

    func cancelTask() {
        let task = state.withLock { s -> Task<Void, Never>? in
            if s.task == nil { s.cancelRequested = true }
            return s.task
        }
        task?.cancel()
        state.withLock { $0.cancellationsInFlight -= 1 }
    }

    var hasCancellationInFlight: Bool { state.withLock { $0.cancellationsInFlight > 0 } }
}
