import Runtime
import Synchronization

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
/// lock is ever held across a suspension point. Subclasses that add mutable state must protect it likewise
/// (a ``LockedValue``, or a `let` set at creation), and must restate `@unchecked Sendable` (Swift requires
/// it of every subclass of an `@unchecked Sendable` class).
// @unchecked: a non-final (open) class cannot have a checked Sendable conformance; its state is in `core`.
open class AsyncOperation: @unchecked Sendable, CustomStringConvertible {
    /// A process-wide unique identifier, increasing in creation order.
    public let id: UInt64
    let core: LockedValue<OperationCore>

    /// Creates a pending operation.
    /// - Parameters:
    ///   - name: a name for diagnostics (cycle errors, logs); defaults to `"<TypeName>#<id>"`.
    ///   - priority: the scheduling priority inside its queue.
    public init(name: String? = nil, priority: OperationPriority = .normal) {
        id = operationIDCounter.wrappingAdd(1, ordering: .relaxed).newValue
        core = LockedValue(OperationCore(name: name, priority: priority))
    }

    /// Releases the dependency edges iteratively: freeing the last operation of a long chain must not
    /// recurse once per link (which would overflow the stack).
    deinit {
        var edges = core.withLock { $0.takeEdges() }
        var others: [AsyncOperation] = []  // (allocated only where the released graph branches)
        while true {
            guard var operation = edges.popLast()?.operation ?? others.popLast() else { break }
            if isKnownUniquelyReferenced(&operation) {
                // It is freed right after this iteration: take its edges first, so that its own deinit
                // finds none to release (no recursion).
                var more = operation.core.withLock { $0.takeEdges() }
                if edges.isEmpty {
                    swap(&edges, &more)
                } else {
                    while let edge = more.popLast() { others.append(edge.operation) }
                }
            }
        }
    }

    // MARK: - Work

    /// The work. Override it in a subclass; the default implementation does nothing.
    ///
    /// Return normally to finish successfully; throw to fail (with the error as ``errors``; throw a
    /// ``MultipleErrors`` to report several). It runs on a Swift task of its own while it runs (a
    /// runner's task, see ``WorkQueue``), which is cancelled when the operation is cancelled or times out: check `Task.isCancelled` or call `Task.checkCancellation()`
    /// in long loops. It may suspend for as long as it likes, for example until a network reply
    /// arrives (see ``CompletableOperation``). With a ``retryPolicy`` it can be called more than once
    /// (see ``attempt``).
    open func execute() async throws {}

    /// Called once, right after cancellation was requested and before the operation finishes (see
    /// AsyncOperation+Cancellation.swift). ``GroupOperation`` overrides it to cancel its children.
    func cancellationRequested(errors: [any Error]) {}

    /// Whether the operation's work is started synchronously and finished from outside (``ExternalOperation``).
    var startsExternally: Bool { false }

    /// Starts an external operation's work (``ExternalOperation/start()``); nothing for other operations.
    func startExternalWork() {}

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
            if s.state == .pending { s.updateExtras { $0.conditions.append(condition) } }
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
            s.updateExtras { $0.hooks.completions.append(handler) }
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
            s.updateExtras { extras in
                extras.nextWaiterID &+= 1
                return extras.nextWaiterID
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = core.withLock { s -> Bool in
                    if s.state.isTerminal || Task.isCancelled { return true }
                    s.updateExtras { $0.hooks.waiters.append((waiterID, continuation)) }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = core.withLock { s -> CheckedContinuation<Void, Never>? in
                s.updateExtras { extras in
                    guard let index = extras.hooks.waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                    return extras.hooks.waiters.remove(at: index).continuation
                }
            }
            continuation?.resume()
        }
    }
}

/// The process-wide counter behind ``AsyncOperation/id`` (an atomic: a counter needs no lock).
let operationIDCounter = Atomic<UInt64>(0)
