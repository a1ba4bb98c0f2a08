import Wire

/// One item's tasks as a state machine free of I/O: the engine's rules for an item, applied by value.
///
/// An item is one no-op, or a download and a tilt-shift that depends on it. The download's output is
/// injected into the tilt-shift (by reference when the image stayed on its worker, `Lineage`); a failed
/// download fails the item with the download's own failure (the tilt-shift is never sent); a manifest's
/// list ends the item with the list. Each task's attempts go through `RemoteRun` (lineage re-runs) and
/// `TaskRetrySchedule` (retries after a wait). Results in, steps out: `CoordinatorCore` carries them out
/// on the dispatcher, the journal and the timers.
struct ItemRun {
    /// Where the item stands.
    enum Phase: Equatable {
        /// Its download waits for a turn at its origin host (`DownloadTurns`).
        case waitingForHost
        /// Its current task is in the dispatcher (queued or running on a worker).
        case dispatched
        /// Its current task failed and runs again once its `CoreTimer.retry` fires.
        case waitingToRetry
        /// An uploaded file's tilt-shift: it waits for the file's bytes (`UploadWindow`, `uploaded(_:)`).
        case awaitingUpload
    }

    /// What the core does after an event of the item.
    enum Step {
        /// Queue this request of the current task in the dispatcher.
        case send(RemoteRun.Request)
        /// The attempt failed and is tried again after `wait` (`CoreTimer.retry` of the current task).
        case retry(after: Duration, failed: AttemptStatus)
        /// The item ended with this outcome (a failed attempt that ended it comes with it).
        case finish(TaskOutcome, failed: AttemptStatus?)
    }

    let index: Int
    /// The item's tasks in dependency order, as first sent (a tilt-shift's input is injected when it starts).
    let tasks: [TaskAssignment]
    /// The download's tilt-shift as it is chained to it on a worker that accepts chained tasks.
    let followOn: Shared<TaskAssignment>?
    /// The origin host whose download cap the item's download counts against; `nil`: none.
    let host: String?
    let retrySchedule: TaskRetrySchedule
    /// The task that runs now (an index into `tasks`).
    private(set) var stage = 0
    private(set) var run: RemoteRun
    var phase: Phase
    /// The item's download holds a place at its origin host (`DownloadTurns`), given back when it ends.
    var holdsHost = false
    /// Every failed attempt so far, oldest first (those a previous run of the coordinator journaled too).
    private(set) var failedAttempts: [AttemptStatus]
    /// The failure the pending retry follows.
    private var retryAfter: RemoteTaskError?

    /// An item about to start: its first task (a download waits for its host's turn when `host` is set).
    init(
        index: Int, tasks: [TaskAssignment], followOn: TaskAssignment?, host: String?, retrySchedule: TaskRetrySchedule,
        restoredAttempts: [AttemptStatus] = [], awaitsUpload: Bool = false
    ) {
        self.index = index
        self.tasks = tasks
        self.followOn = followOn.map(Shared.init)
        self.host = host
        self.retrySchedule = retrySchedule
        self.failedAttempts = restoredAttempts
        let first = tasks[0]
        run = RemoteRun(
            assignment: first, lineage: nil, attempt: Self.earlier(restoredAttempts, of: first).count + 1,
            workerLosses: Self.earlier(restoredAttempts, of: first).filter { $0.code == .workerLost }.count,
            followOn: self.followOn)
        phase = awaitsUpload ? .awaitingUpload : host == nil ? .dispatched : .waitingForHost
    }

    /// The uploaded file's bytes are in: the tilt-shift goes with them injected (its retries keep them).
    /// `nil` unless the item awaits its upload.
    mutating func uploaded(_ input: InjectedInput) -> RemoteRun.Request? {
        guard phase == .awaitingUpload else { return nil }
        var task = tasks[stage]
        task.inputs = [input]
        let earlier = Self.earlier(failedAttempts, of: task)
        run = RemoteRun(
            assignment: task, lineage: nil, attempt: earlier.count + 1,
            workerLosses: earlier.filter { $0.code == .workerLost }.count)
        phase = .dispatched
        return run.request
    }

    /// The task that runs now.
    var current: TaskAssignment { tasks[stage] }
    /// Its key, under which the dispatcher holds it and its results come.
    var currentKey: TaskKey { tasks[stage].taskKey }
    /// The dispatch priority of the current task: a tilt-shift whose download finished goes before
    /// downloads, so that started items finish before new ones start.
    var priority: Int { stage > 0 ? 1 : 0 }
    /// For the download: the tilt-shift a worker keeps a slot for (`RemoteRun.Request.keepsSlotForDependent`).
    var dependentKey: TaskKey { stage + 1 < tasks.count ? tasks[stage + 1].taskKey : 0 }
    /// Tasks of the item not in the dispatcher: waiting for a turn, a retry, or their dependency.
    var tasksWaiting: Int { tasks.count - stage - (phase == .dispatched ? 1 : 0) }

    /// The first request of the current task.
    var firstRequest: RemoteRun.Request { run.request }

    /// The result of the request the current task sent last. `wallClockMilliseconds` dates a failed
    /// attempt, `fraction` (0..<1) is the random part of a retry's wait.
    mutating func received(
        _ result: Result<TaskOutput, RemoteTaskError>, wallClockMilliseconds: UInt64,
        fraction: Double
    ) -> Step {
        switch run.step(after: result.mapError { $0 as any Error }) {
        case .succeed(let output):
            return succeeded(output)
        case .send(let request):
            return .send(request)
        case .failed(let error):
            return failed(error, wallClockMilliseconds: wallClockMilliseconds, fraction: fraction)
        case .stop(let error):
            return .finish(.failure(TaskFailure(code: .cancelled, message: "\(error)")), failed: nil)
        }
    }

    /// The current task succeeded: the item ends with its output, or its dependent starts with the output
    /// injected (dependency, injection). A download whose output is a manifest's list ends the item with
    /// the list: there is nothing to filter.
    private mutating func succeeded(_ output: TaskOutput) -> Step {
        guard stage + 1 < tasks.count, !ManifestList.isList(output) else {
            return .finish(.output(output), failed: nil)
        }
        let producer = tasks[stage]
        stage += 1
        var next = tasks[stage]
        next.inputs = [Lineage.input(from: producer, output: output)]
        let earlier = Self.earlier(failedAttempts, of: next)
        // An input that stayed on the worker that downloaded it: if that copy is lost, download again.
        run = RemoteRun(
            assignment: next, lineage: output.heldOnWorker ? Lineage(producer: producer) : nil,
            attempt: earlier.count + 1, workerLosses: earlier.filter { $0.code == .workerLost }.count)
        phase = .dispatched
        return .send(run.request)
    }

    /// An attempt failed on a worker: it is recorded, and retried after the schedule's wait, or the item
    /// fails with it. A failed download fails the item with the download's failure: the dependent is
    /// never sent (a failed dependency fails its dependent with the cause).
    private mutating func failed(_ error: RemoteTaskError, wallClockMilliseconds: UInt64, fraction: Double) -> Step {
        if error.failure.code == .workerLost { run.workerLosses += 1 }
        let decision = retrySchedule.decide(
            after: error.failure, attempt: run.attempt, fraction: fraction,
            workerLosses: run.workerLosses)
        var wait: Duration?
        if case .retry(let after) = decision { wait = after }
        let attempt = AttemptStatus(
            task: current.kind.logName, attempt: UInt32(clamping: run.attempt), code: error.failure.code,
            error: error.failure.message, isTransient: TaskRetrySchedule.isRetryable(error.failure),
            retried: wait != nil, retryDelayMs: wait.map(RetryAfterClamp.milliseconds) ?? 0,
            worker: error.workerID, failedUnixMilliseconds: wallClockMilliseconds)
        failedAttempts.append(attempt)
        guard let wait else {
            return .finish(
                .failure(TaskRetrySchedule.finalFailure(error.failure, workerLosses: run.workerLosses)),
                failed: attempt)
        }
        phase = .waitingToRetry
        retryAfter = error
        return .retry(after: wait, failed: attempt)
    }

    /// The retry's wait is over: the next attempt's request (a new attempt number, away from the worker
    /// where it failed); `nil` when no retry is pending.
    mutating func retryDue() -> RemoteRun.Request? {
        guard phase == .waitingToRetry, let error = retryAfter else { return nil }
        retryAfter = nil
        phase = .dispatched
        return run.retry(after: error)
    }

    /// The failed attempts of `task`'s kind among `attempts` (an item's attempts, by task).
    private static func earlier(_ attempts: [AttemptStatus], of task: TaskAssignment) -> [AttemptStatus] {
        attempts.isEmpty ? [] : attempts.filter { $0.task == task.kind.logName }
    }
}
