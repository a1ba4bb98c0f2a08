import Operations
import Synchronization
import Wire

/// Runs a task on some worker of the cluster: what the coordinator's operations call to get work done.
protocol RemoteTaskRunning: Sendable {
    /// Queues `assignment` for a worker and suspends until its result arrives. Throws `RemoteTaskError`
    /// when the worker reports a failure, `CancellationError` when the coordinator withdrew the task (its
    /// item was cancelled, or the coordinator stops). Cancelling the calling task alone does not reach
    /// the cluster: a cancel goes down from the coordinator, which cancels the operation and withdraws
    /// its task (`Coordinator.cancel`, then `withdraw`).
    /// `wasWaiting` is true the first time the operation asks (it leaves the count of tasks waiting to start).
    /// `dependentKey` (for a download: its tilt-shift's key; 0: none) asks the dispatcher to keep the
    /// worker's slot for the dependent once this task succeeds, so that it runs where its input is.
    /// `avoiding` (a retry) names the worker where the last attempt failed: another with a free slot is
    /// preferred.
    func run(_ assignment: TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey,
             avoiding: PeerIdentity?) async throws -> TaskOutput
}

/// A task that failed on a worker (or was timed out by the coordinator), with the code and message, the
/// attempt that failed and where it ran.
struct RemoteTaskError: Error, CustomStringConvertible {
    let failure: TaskFailure
    /// The attempt number of the failed attempt (`TaskResult.attempt`); 0 when unknown.
    var attempt: UInt32 = 0
    /// The worker it ran on, when known.
    var worker: PeerIdentity?
    /// That worker's ID, for status.
    var workerID = ""
    var description: String { failure.message }
}

/// An operation whose execution is "send a task to a worker, await its result": the coordinator's
/// children of a batch. Dependencies, injection and cancellation follow the engine's rules, as for any
/// local operation; the coordinator withdraws the task of one it cancels from the cluster (a running
/// task is cancelled on its worker).
///
/// It consumes and produces a `TaskOutput`, so a download's output can be injected into the
/// tilt-shift that depends on it.
///
/// A batch may queue a million of these, so a waiting one is kept small: it holds only its own fields
/// (kind, item, task key, source, sink name) and the batch's shared `BatchTaskContext`, builds its
/// `TaskAssignment` when it starts, and allocates room for payloads and failed attempts only once it has any.
final class RemoteTaskOperation: AsyncOperation, ResultProducing, ResultConsuming, @unchecked Sendable {
    typealias Output = TaskOutput
    typealias Input = TaskOutput

    /// What the tasks of the batch share: the batch-wide part of the assignment, the runner, the retries.
    let context: BatchTaskContext
    let kind: TaskKind
    /// The item's index in its batch.
    let item: Int
    /// The key results are matched by (the registry hands the keys out).
    let taskKey: TaskKey
    /// The item's source (URL or path).
    let source: String
    /// The output's name in the sink (a tilt-shift with a sink); empty otherwise.
    let sinkName: String
    private let dispatchPriority: Int
    // Guards the payloads, which are handed over between threads by the engine, the task that produced
    // the input (to run again if the worker holding it is lost), and every failed attempt, oldest first,
    // for status. `nil` until the first of them is set: a queued task holds none.
    private let payloads = Mutex<Payloads?>(nil)
    /// Whether the task still counts as waiting to start (see `claimStart()`).
    private let waiting = Mutex(true)

    /// For a download: the key of the tilt-shift that will consume its output (see `RemoteTaskRunning`).
    let dependentKey = Atomic<TaskKey>(0)

    /// A task of `context`'s batch. `taskKey` must not be 0: results are matched by it.
    init(_ kind: TaskKind, item: Int, taskKey: TaskKey, source: String, sinkName: String = "",
         context: BatchTaskContext, priority: Int = 0) {
        assert(taskKey != 0, "a remote task needs a task key")
        self.context = context
        self.kind = kind
        self.item = item
        self.taskKey = taskKey
        self.source = source
        self.sinkName = sinkName
        self.dispatchPriority = priority
        // The engine's priority follows the dispatch priority: a tilt-shift whose download finished goes
        // before downloads still waiting for a place in their batch.
        super.init(name: BatchTaskContext.taskID(batchID: context.batchID, item: item, kind: kind),
                   priority: priority > 0 ? .high : .normal)
    }

    /// The assignment to send (its `inputs` are filled from `input` when it executes).
    var template: TaskAssignment {
        context.assignment(kind: kind, item: item, taskKey: taskKey, source: source, sinkName: sinkName)
    }

    /// Which failures are tried again, how often, after which wait.
    var retrySchedule: TaskRetrySchedule { context.retrySchedule }

    /// The injected input (a download's bytes, for a tilt-shift).
    var input: TaskOutput? {
        get { payloads.withLock { $0?.input } }
        set { payloads.withLock { Payloads.ensure(&$0).input = newValue } }
    }

    /// The worker's output, once the task succeeded (until `takeOutput()` hands it over).
    var output: TaskOutput? { payloads.withLock { $0?.output } }

    /// Hands the output over and forgets it, so that a payload is held once in the coordinator.
    func takeOutput() -> TaskOutput? {
        payloads.withLock { state in
            defer { state?.output = nil }
            return state?.output
        }
    }

    /// Sets the input taken from `dependency` (manual injection that moves the payload).
    func inject(from dependency: RemoteTaskOperation) {
        let moved = dependency.takeOutput()
        let producer = dependency.template
        payloads.withLock {
            let state = Payloads.ensure(&$0)
            state.input = moved
            state.producer = producer
        }
    }

    /// Takes the task out of the "waiting to start" count: returns `true` once, to whoever asks first
    /// (its first dispatch, or its item's end if it never ran).
    func claimStart() -> Bool {
        waiting.withLock { isWaiting in
            defer { isWaiting = false }
            return isWaiting
        }
    }

    /// Every failed attempt so far, oldest first.
    var failedAttempts: [AttemptStatus] { payloads.withLock { $0?.failures ?? [] } }

    /// Forgets input and output once the item's result has been delivered (and the failed attempts, which
    /// the registry keeps once the item finished).
    func releasePayloads() {
        payloads.withLock { $0 = nil }
    }

    override func execute() async throws {
        var assignment = template
        let (input, producer) = payloads.withLock { ($0?.input, $0?.producer) }
        if let input, ManifestList.isList(input) {
            // The download was a manifest: nothing to filter. The list becomes the item's output, and
            // the coordinator adds the images it names to the batch.
            payloads.withLock {
                let state = Payloads.ensure(&$0)
                state.output = input
                state.input = nil
            }
            return
        }
        if let input, let producer {
            assignment.inputs = [Lineage.input(from: producer, output: input)]
        }
        // An input that stayed on the worker that downloaded it: if that copy is lost, download again.
        let lineage = input?.heldOnWorker == true ? producer.map { Lineage(producer: $0, runner: context.runner) } : nil
        let result = try await runWithRetries(assignment, lineage: lineage)
        payloads.withLock {
            let state = Payloads.ensure(&$0)
            state.output = result
            // The worker has consumed the input: keep it only while a re-run could still need it.
            state.input = nil
        }
    }

    /// Sends the task; after a failure that the schedule retries, sends it again after the schedule's wait,
    /// as a new attempt (a late result of the old one is stale), to another worker where one is free. The
    /// wait is cancelled with the operation. Every failed attempt is recorded for status.
    private func runWithRetries(_ first: TaskAssignment, lineage: Lineage?) async throws -> TaskOutput {
        var assignment = first
        var attempt = 1
        var avoiding: PeerIdentity?
        var wasWaiting = claimStart()
        while true {
            do {
                if let lineage {
                    return try await lineage.run(assignment, priority: dispatchPriority, wasWaiting: wasWaiting, avoiding: avoiding)
                }
                return try await context.runner.run(
                    assignment, priority: dispatchPriority, wasWaiting: wasWaiting,
                    dependentKey: dependentKey.load(ordering: .relaxed), avoiding: avoiding)
            } catch let error as RemoteTaskError {
                let decision = retrySchedule.decide(after: error.failure, attempt: attempt, fraction: Double.random(in: 0..<1))
                var wait: Duration?
                if case .retry(let after) = decision, !Task.isCancelled { wait = after }
                payloads.withLock {
                    Payloads.ensure(&$0).failures.append(AttemptStatus(
                        task: assignment.kind.logName, attempt: UInt32(attempt), code: error.failure.code,
                        error: error.failure.message, isTransient: TaskRetrySchedule.isRetryable(error.failure),
                        retried: wait != nil, retryDelayMs: wait.map(RetryAfterClamp.milliseconds) ?? 0,
                        worker: error.workerID))
                }
                guard let wait else { throw error }
                try await Task.sleep(for: wait)
                attempt += 1
                assignment.attempt = max(assignment.attempt, error.attempt) + 1
                avoiding = error.worker
                wasWaiting = false
            }
        }
    }

    /// A task's payloads and failed attempts, allocated when the first of them arrives. Reached only
    /// under `payloads`' lock.
    private final class Payloads {
        var input: TaskOutput?
        var output: TaskOutput?
        var producer: TaskAssignment?
        var failures: [AttemptStatus] = []

        /// The payloads in `slot`, allocated there first if there are none yet.
        static func ensure(_ slot: inout Payloads?) -> Payloads {
            if let payloads = slot { return payloads }
            let payloads = Payloads()
            slot = payloads
            return payloads
        }
    }
}
