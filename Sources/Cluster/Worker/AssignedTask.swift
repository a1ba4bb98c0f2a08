import Fetching
import Imaging
import Operations
import Runtime
import Wire

/// Turns a task assignment into an operation of the engine, and the finished operation into the
/// `TaskResult` the coordinator expects.
///
/// Every failure becomes a `TaskFailure` with a code and a message that says what went wrong, so a
/// broken image fails its own item and nothing else.
struct AssignedTask: Sendable {
    let assignment: TaskAssignment
    /// The operation, by kind (its output read with its own type).
    let work: TaskOperation
    var operation: AsyncOperation { work.operation }
    /// Writes the worker's lines about this task, with its metadata (`batch`, `task`, `attempt`, `kind`).
    let log: TaskLogger
    /// When the worker received the assignment.
    let received: ContinuousClock.Instant
    /// For a tilt-shift chained to a download (`TaskAssignment.followOn`): that download's task key, which a
    /// `CancelTask` may still name; 0: none.
    var chainedAfter: UInt64 = 0
    /// That download's result, held back to go with this task's (`WorkerConfiguration.reportsChainedTasksTogether`).
    var heldBack: TaskResult?
    /// For a tilt-shift: decides between its pipeline starting and the task being given back to the
    /// coordinator (`GiveBackTask`); `nil` for a download, which starts at once.
    let startGate: StartGate?

    /// Builds the operation for `assignment`: a `FetchOperation`, or a `TiltShiftOperation` whose input
    /// is the image injected into the assignment by the coordinator, run on `computeThreads` (a sink's write
    /// on `sinkThreads`). At `debug`, the operation logs through `log` when it starts executing.
    init(
        _ assignment: TaskAssignment, fetcher: ImageFetcher, filterThreads: Int, limits: ImageLimits,
        computeThreads: ComputeThreads, sinkThreads: ComputeThreads, log: TaskLogger,
        received: ContinuousClock.Instant = .now
    ) throws(TaskRejection) {
        self.assignment = assignment
        self.log = log
        self.received = received
        var startGate: StartGate?
        switch assignment.kind {
        case .download:
            work = .download(
                FetchOperation(
                    source: assignment.source, fetcher: fetcher,
                    s3Endpoint: assignment.s3Endpoint.isEmpty ? nil : assignment.s3Endpoint))
        case .tiltShift:
            guard let injected = assignment.inputs.first else {
                throw TaskRejection(
                    TaskFailure(
                        code: .dependency,
                        message: "tilt-shift task \(assignment.taskID) arrived without its input image"))
            }
            // An uploaded file's bytes carry the CRC-32C the client computed (0: not said).
            if injected.crc32c != 0, CRC32C.checksum(injected.data) != injected.crc32c {
                throw TaskRejection(
                    TaskFailure(
                        code: .upload, message: "\(assignment.source): the uploaded bytes fail their CRC-32C"))
            }
            guard let format = ImageFormat(sniffing: injected.data) else {
                throw TaskRejection(
                    TaskFailure(
                        code: .decode,
                        message:
                            "\(assignment.source): the downloaded bytes are not a \(ImageFormat.readableNames) image"))
            }
            let parameters =
                assignment.parameters
                ?? WireTiltShiftParameters(
                    TiltShiftParameters.coreImage, encoding: EncodingOptions())
            if !assignment.sink.isEmpty {
                // The output goes to the batch's sink from here; only its metadata goes back.
                let sink: any OutputSink
                do {
                    try OutputSinks.checkName(assignment.sinkName, sink: assignment.sink)
                    sink = try OutputSinks.make(
                        assignment.sink, s3Endpoint: assignment.s3Endpoint, threads: sinkThreads,
                        fetcher: fetcher)
                } catch {
                    throw TaskRejection(TaskFailure(code: .sink, message: "\(assignment.source): \(error)"))
                }
                let tiltShift = SinkTiltShiftOperation(
                    name: "tilt-shift \(assignment.source)", parameters: parameters.filterParameters,
                    encoding: parameters.encodingOptions, threads: filterThreads, limits: limits,
                    computeThreads: computeThreads, sink: sink, outputName: assignment.sinkName)
                tiltShift.input = EncodedImage(data: injected.data, format: format)
                startGate = StartGate()
                tiltShift.startGate = startGate
                work = .sinkTiltShift(tiltShift)
            } else {
                let tiltShift = TiltShiftOperation(
                    name: "tilt-shift \(assignment.source)", parameters: parameters.filterParameters,
                    encoding: parameters.encodingOptions, threads: filterThreads, limits: limits,
                    computeThreads: computeThreads)
                tiltShift.input = EncodedImage(data: injected.data, format: format)
                startGate = StartGate()
                tiltShift.startGate = startGate
                work = .tiltShift(tiltShift)
            }
        case .noop:
            work = .noop(NoOpOperation(name: assignment.taskID))
        case .unspecified:
            throw TaskRejection(
                TaskFailure(
                    code: .internal,
                    message: "task \(assignment.taskID) has a kind this worker does not know: upgrade the worker"))
        }
        self.startGate = startGate
        if log.isEnabled(.debug) {
            work.operation.addObserver(BlockObserver(willExecute: { _ in log.debug("task started") }))
        }
    }

    /// The result to send once the operation has finished.
    var result: TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: Self.outcome(of: work),
            taskKey: assignment.taskKey)
    }

    /// Logs the result the worker has just sent: a success or a cancellation at `debug` (per-task
    /// lines stay out of `info`, which must stay quiet at thousands of tasks a second), a failure at
    /// `info` with its code and error.
    func logSent(_ result: TaskResult) {
        switch result.outcome {
        case .output(let output):
            log.debug(
                "task succeeded, result sent",
                metadata: [
                    "bytes": "\(output.data.count)", "elapsed_ms": "\(elapsedMilliseconds)",
                    "location": "\(output.location)",
                ])
        case .failure(let failure) where failure.code == .cancelled:
            log.debug(
                "task cancelled, result sent",
                metadata: [
                    "error": "\(failure.message)", "elapsed_ms": "\(elapsedMilliseconds)",
                ])
        case .failure(let failure):
            log.info(
                "task failed, result sent",
                metadata: [
                    "code": "\(failure.code.logName)", "error": "\(failure.message)",
                    "elapsed_ms": "\(elapsedMilliseconds)",
                ])
        }
    }

    /// Milliseconds since the worker received the task.
    private var elapsedMilliseconds: Int64 {
        let elapsed = (ContinuousClock.now - received).components
        return elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    }

    static func outcome(of work: TaskOperation) -> TaskOutcome {
        let operation = work.operation
        switch operation.state {
        case .finished:
            if let output = work.output { return .output(output) }
            return .failure(TaskFailure(code: .internal, message: "\(operation.name) finished without an output"))
        case .cancelled:
            return .failure(TaskFailure(code: .cancelled, message: "\(operation.name) was cancelled"))
        case .failed:
            var failure = failure(from: operation.errors, operation: operation.name)
            if let advice = work.retryAdvice, failure.code == .download {
                // The coordinator retries a transient failure, on another worker where it can.
                failure.isTransient = advice.isTransient
                failure.retryAfterMs = advice.retryAfter.map(RetryAfterClamp.milliseconds) ?? 0
            }
            return .failure(failure)
        case .pending, .ready, .executing:
            return .failure(TaskFailure(code: .internal, message: "\(operation.name) has not finished"))
        }
    }

    private static func failure(from errors: [any Error], operation: String) -> TaskFailure {
        guard let error = errors.first else {
            return TaskFailure(code: .internal, message: "\(operation) failed without an error")
        }
        if let imaging = error as? ImagingError {
            return TaskFailure(code: FailureCode(imaging.kind), message: imaging.message)
        }
        if error is CancellationError {
            return TaskFailure(code: .cancelled, message: "\(operation) was cancelled")
        }
        if let sink = error as? SinkError {
            return TaskFailure(code: .sink, message: "\(operation): \(sink)")
        }
        return TaskFailure(code: .internal, message: "\(operation): \(error)")
    }
}

/// A task the worker refuses before running it, with the failure to report.
struct TaskRejection: Error {
    let failure: TaskFailure
    init(_ failure: TaskFailure) { self.failure = failure }
}

extension FailureCode {
    init(_ kind: ImagingError.Kind) {
        switch kind {
        case .download: self = .download
        case .decode: self = .decode
        case .processing: self = .processing
        case .limit: self = .limit
        case .cancelled: self = .cancelled
        }
    }
}

/// The operation of a no-op task: it succeeds at once. Measures the cluster's own overhead.
final class NoOpOperation: AsyncOperation, @unchecked Sendable {}
