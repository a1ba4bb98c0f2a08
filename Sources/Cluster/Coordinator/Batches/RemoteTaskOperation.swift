import Foundation
import Operations
import Runtime
import Synchronization
import Wire

/// Runs a task on some worker of the cluster: what the coordinator's operations call to get work done.
protocol RemoteTaskRunning: Sendable {
    /// Queues `request`'s assignment for a worker; its operation is told the result
    /// (`RemoteTaskOperation.received`) on the coordinator's actor, once it arrives: the output, a
    /// `RemoteTaskError` when the worker reports a failure, `CancellationError` when the coordinator withdrew
    /// the task (its item was cancelled, or the coordinator stops). A request of an operation that has
    /// finished meanwhile (cancelled) is dropped. Never suspends or blocks: the request is posted.
    func request(_ request: RemoteRequest)

    /// Keeps a failed attempt at a task of item `itemIndex` of `batchID` (the coordinator journals it,
    /// so that status shows it after a restart and the item's retries keep counting).
    func recordFailedAttempt(_ attempt: AttemptStatus, itemIndex: Int, batchID: String)
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
    /// For an attempt lost with its worker: whether the worker or only the assignment was lost.
    var lossReason: TaskResends.Reason?
    var description: String { failure.message }

    /// Why the task runs again if it is retried (`TaskResends`).
    var resendReason: TaskResends.Reason { lossReason ?? TaskResends.Reason(retrying: failure.code) }
}

/// An operation whose execution is "send a task to a worker, take its result": the coordinator's
/// children of a batch. An `ExternalOperation`: while its task is queued or runs on a worker it holds no
/// Swift task; the coordinator's actor finishes it when the result arrives (`received`), and a dependent
/// it makes ready (the item's tilt-shift) starts in the same step, its request queued with the same
/// wake-up's (docs/architecture.md, "How a remote operation waits"). Dependencies, injection and
/// cancellation follow the engine's rules, as for any local operation. Cancelled while its task is out,
/// it finishes as cancelled at once (`ExternalOperation`'s default): a late result is ignored, a retry
/// not sent, a request not queued yet dropped; the coordinator withdraws the task of one it cancels from
/// the cluster (a running task is cancelled on its worker).
///
/// It consumes and produces a `TaskOutput`, so a download's output can be injected into the
/// tilt-shift that depends on it.
final class RemoteTaskOperation: ExternalOperation, ResultProducing, ResultConsuming, @unchecked Sendable {
    typealias Output = TaskOutput
    typealias Input = TaskOutput

    /// The assignment to send (its `inputs` are filled from `input` when it executes).
    let template: TaskAssignment
    /// The item of its batch it belongs to.
    let itemIndex: Int
    /// Whether its result is its item's result (the item's last operation: a no-op or a tilt-shift, not a
    /// download): its batch hands the item to the coordinator when it finishes (`BatchOperation.childDidFinish`).
    let endsItem: Bool
    private let runner: any RemoteTaskRunning
    private let dispatchPriority: Int
    /// Which failures are tried again, how often, after which wait.
    let retrySchedule: TaskRetrySchedule
    // Guards the payloads, which are handed over between threads by the engine, the task that produced
    // the input (to run again if the worker holding it is lost), and every failed attempt, oldest first,
    // for status.
    private let payloads = InlineLock<(input: TaskOutput?, output: TaskOutput?, producer: TaskAssignment?, failures: [AttemptStatus])>(
        (nil, nil, nil, []))
    /// Whether the task still counts as waiting to start (see `claimStart()`).
    private let waiting = InlineLock(true)
    /// Where its attempts stand (set by `start()`, advanced by `received`).
    private let run = InlineLock<RemoteRun?>(nil)

    /// For a download: the key of the tilt-shift that will consume its output (see `RemoteRequest`).
    let dependentKey = Atomic<TaskKey>(0)
    /// For a download: that tilt-shift as it is first sent, chained to the download where a worker accepts
    /// chained tasks (`RemoteRequest.followOn`); `nil`: none.
    let followOn: Shared<TaskAssignment>?

    /// `template.taskKey` must be set (the registry hands the keys out): results are matched by it.
    init(_ template: TaskAssignment, itemIndex: Int, runner: any RemoteTaskRunning, priority: Int = 0,
         retrySchedule: TaskRetrySchedule = TaskRetrySchedule(), followOn: TaskAssignment? = nil, endsItem: Bool = true) {
        assert(template.taskKey != 0, "a remote task needs a task key")
        self.template = template
        self.endsItem = endsItem
        self.followOn = followOn.map(Shared.init)
        self.itemIndex = itemIndex
        self.runner = runner
        self.dispatchPriority = priority
        self.retrySchedule = retrySchedule
        // The engine's priority follows the dispatch priority: a tilt-shift whose download finished goes
        // before downloads still waiting for a place in their batch.
        super.init(name: template.taskID, priority: priority > 0 ? .high : .normal)
    }

    /// The injected input (a download's bytes, for a tilt-shift).
    var input: TaskOutput? {
        get { payloads.withLock { $0.input } }
        set { payloads.withLock { $0.input = newValue } }
    }

    /// The worker's output, once the task succeeded (until `takeOutput()` hands it over).
    var output: TaskOutput? { payloads.withLock { $0.output } }

    /// Hands the output over and forgets it, so that a payload is held once in the coordinator.
    func takeOutput() -> TaskOutput? {
        payloads.withLock { state in
            defer { state.output = nil }
            return state.output
        }
    }

    /// Sets the input taken from `dependency` (manual injection that moves the payload).
    func inject(from dependency: RemoteTaskOperation) {
        let moved = dependency.takeOutput()
        payloads.withLock {
            $0.input = moved
            $0.producer = dependency.template
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
    var failedAttempts: [AttemptStatus] { payloads.withLock { $0.failures } }

    /// Takes up the failed attempts a previous run of the coordinator recorded for this task (from its
    /// journal), before it executes: they show in status, and count against its retries.
    func restore(failedAttempts: [AttemptStatus]) {
        payloads.withLock { $0.failures = failedAttempts }
    }

    /// Forgets input and output once the item's result has been delivered.
    func releasePayloads() {
        payloads.withLock {
            $0.input = nil
            $0.output = nil
            $0.failures = []  // kept by the registry once the item finished
        }
    }

    /// Sends the task (filled with its injected input). A manifest's list as input finishes it at once.
    override func start() {
        var assignment = template
        let (input, producer, earlier) = payloads.withLock { ($0.input, $0.producer, $0.failures) }
        if let input, ManifestList.isList(input) {
            // The download was a manifest: nothing to filter. The list becomes the item's output, and
            // the coordinator adds the images it names to the batch.
            payloads.withLock {
                $0.output = input
                $0.input = nil
            }
            return finish()
        }
        if let input, let producer {
            assignment.inputs = [Lineage.input(from: producer, output: input)]
        }
        // An input that stayed on the worker that downloaded it: if that copy is lost, download again.
        let lineage = input?.heldOnWorker == true ? producer.map { Lineage(producer: $0) } : nil
        let started = RemoteRun(assignment: assignment, lineage: lineage, attempt: earlier.count + 1,
                                workerLosses: earlier.lazy.filter { $0.code == .workerLost }.count, followOn: followOn)
        let request = started.request
        var moving = Optional(started)
        run.withLock { $0 = moving.take() }  // moved in, not copied
        send(request, wasWaiting: claimStart())
    }

    /// The result of the request it sent last (on the coordinator's actor): finishes the operation, or
    /// sends the next request (the producer again when the input was lost, see `Lineage`; a retry after
    /// the schedule's wait).
    func received(_ result: Result<TaskOutput, any Error>) {
        guard !isFinished else { return }  // cancelled meanwhile: a late result is dropped
        let step = run.withLock { run -> RemoteRun.Step? in run?.step(after: result) }
        guard let step else { return }
        switch step {
        case .succeed(let output):
            payloads.withLock {
                $0.output = output
                // The worker has consumed the input: keep it only while a re-run could still need it.
                $0.input = nil
            }
            finish()
        case .send(let request):
            send(request, wasWaiting: false)
        case .failed(let error):
            retryOrFail(after: error)
        case .stop(let error):
            finish(throwing: error)
        }
    }

    /// After a failed attempt: records it (and has it journaled), then sends the task again after the
    /// schedule's wait, as a new attempt (a late result of the old one is stale), to another worker where
    /// one is free; or fails. The wait ends early, and nothing is sent, if the operation is cancelled.
    private func retryOrFail(after error: RemoteTaskError) {
        guard let (attempt, workerLosses, assignment) = run.withLock({ run -> (Int, Int, TaskAssignment)? in
            guard var current = run else { return nil }
            if error.failure.code == .workerLost { current.workerLosses += 1 }
            run = current
            return (current.attempt, current.workerLosses, current.assignment)
        }) else { return }
        let decision = retrySchedule.decide(after: error.failure, attempt: attempt, fraction: Double.random(in: 0..<1),
                                            workerLosses: workerLosses)
        var wait: Duration?
        if case .retry(let after) = decision, !isCancelled { wait = after }
        let failed = AttemptStatus(
            task: assignment.kind.logName, attempt: UInt32(attempt), code: error.failure.code,
            error: error.failure.message, isTransient: TaskRetrySchedule.isRetryable(error.failure),
            retried: wait != nil, retryDelayMs: wait.map(RetryAfterClamp.milliseconds) ?? 0,
            worker: error.workerID, failedUnixMilliseconds: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
        payloads.withLock { $0.failures.append(failed) }
        runner.recordFailedAttempt(failed, itemIndex: itemIndex, batchID: template.batchID)
        guard let wait else {
            return finish(throwing: RemoteTaskError(
                failure: TaskRetrySchedule.finalFailure(error.failure, workerLosses: workerLosses),
                attempt: error.attempt, worker: error.worker, workerID: error.workerID))
        }
        // A rare path (a failed attempt): a task sleeps for the wait, then the retry is posted.
        Task { [self] in
            try? await Task.sleep(for: wait)
            guard !isCancelled, let request = run.withLock({ $0?.retry(after: error) }) else { return }
            send(request, wasWaiting: false)
        }
    }

    private func send(_ request: RemoteRun.Request, wasWaiting: Bool) {
        runner.request(RemoteRequest(
            assignment: request.assignment, priority: dispatchPriority, wasWaiting: wasWaiting,
            dependentKey: request.keepsSlotForDependent ? dependentKey.load(ordering: .relaxed) : request.dependentKey,
            avoiding: request.avoiding, followOn: request.followOn, resend: request.resend, operation: self))
    }
}
