import Wire

/// What every remote task of one batch has in common, held once per batch rather than once per task: the
/// batch-wide part of each task's `TaskAssignment` (batch ID, first attempt number, filter parameters,
/// sink, S3 endpoint), the runner that sends tasks to workers, and the retry schedule.
///
/// A queued task keeps only its own fields (`RemoteTaskOperation`: kind, item index, task key, source,
/// sink name) and builds its assignment from these when it starts, which keeps a million queued tasks
/// under 1 KiB each (docs/benchmarks.md, "Memory per queued task").
final class BatchTaskContext: Sendable {
    let batchID: String
    /// The attempt number of every task's first attempt (it grows with the coordinator's incarnation).
    let firstAttempt: UInt32
    /// The filter's parameters, sent with every tilt-shift.
    let parameters: WireTiltShiftParameters
    /// Where workers write the outputs (`SubmitBatch.sink`); empty: back through the coordinator.
    let sink: String
    /// The S3-compatible endpoint for `s3://` sinks and sources (`SubmitBatch.s3Endpoint`).
    let s3Endpoint: String
    let runner: any RemoteTaskRunning
    /// How the batch's tasks are retried (`SubmitBatch.retries`).
    let retrySchedule: TaskRetrySchedule

    init(batchID: String, firstAttempt: UInt32, parameters: WireTiltShiftParameters, sink: String, s3Endpoint: String,
         runner: any RemoteTaskRunning, retrySchedule: TaskRetrySchedule) {
        self.batchID = batchID
        self.firstAttempt = firstAttempt
        self.parameters = parameters
        self.sink = sink
        self.s3Endpoint = s3Endpoint
        self.runner = runner
        self.retrySchedule = retrySchedule
    }

    /// The assignment of one task of the batch, as it is first sent (no inputs, no sequence yet).
    func assignment(kind: TaskKind, item: Int, taskKey: TaskKey, source: String, sinkName: String) -> TaskAssignment {
        var assignment = TaskAssignment(
            taskID: Self.taskID(batchID: batchID, item: item, kind: kind), batchID: batchID, attempt: firstAttempt,
            kind: kind, source: source, parameters: kind == .tiltShift ? parameters : nil, taskKey: taskKey)
        switch kind {
        case .download:
            // The image stays on the worker that downloads it; only its metadata comes here (a manifest's list does).
            assignment.keepOutput = true
            assignment.s3Endpoint = s3Endpoint
        case .tiltShift where !sink.isEmpty:
            assignment.sink = sink
            assignment.sinkName = sinkName  // unique within the batch (BatchRegistry)
            assignment.s3Endpoint = s3Endpoint
        default:
            break
        }
        return assignment
    }

    /// A task's ID: `BATCH/ITEM` for a no-op, `BATCH/ITEM/download` and `BATCH/ITEM/tilt-shift` for an image.
    static func taskID(batchID: String, item: Int, kind: TaskKind) -> String {
        switch kind {
        case .download: "\(batchID)/\(item)/download"
        case .tiltShift: "\(batchID)/\(item)/tilt-shift"
        default: "\(batchID)/\(item)"
        }
    }
}
