import Operations
import Wire

/// Makes the remote operations of one batch item: a download and a tilt-shift into which the
/// download's bytes are injected (or one no-op, for a benchmark batch), with the task keys the registry
/// gave the item. Used for the submitted items and for those a manifest adds while the batch runs.
struct ItemPlanner: Sendable {
    let batchID: String
    let parameters: WireTiltShiftParameters
    let kind: TaskKind
    let maxDownloadsPerHost: Int
    let firstAttempt: UInt32
    let runner: any RemoteTaskRunning
    /// Where workers write the outputs (`SubmitBatch.sink`); empty: back through the coordinator.
    var sink = ""
    /// The S3-compatible endpoint for `s3://` sinks and sources (`SubmitBatch.s3Endpoint`).
    var s3Endpoint = ""
    /// How the batch's tasks are retried (`SubmitBatch.retries`).
    var retrySchedule = TaskRetrySchedule()
    /// Batches take turns for an origin host's downloads (fair share); `false`: first come first served (FIFO).
    var sharesHosts = true

    /// What every task of the batch shares; made once per batch (`BatchOperation`) and passed to `tasks`.
    func makeContext() -> BatchTaskContext {
        BatchTaskContext(batchID: batchID, firstAttempt: firstAttempt, parameters: parameters, sink: sink,
                         s3Endpoint: s3Endpoint, runner: runner, retrySchedule: retrySchedule)
    }

    /// The operations of the item at `index`, in dependency order; none for an item without task keys
    /// (it had finished before the coordinator restarted). `context` is this planner's `makeContext()`.
    func tasks(for item: RegisteredBatch.Item, index: Int, context: BatchTaskContext) throws -> [RemoteTaskOperation] {
        let key = item.firstTaskKey
        guard key != 0 else { return [] }
        if kind == .noop {
            return [RemoteTaskOperation(.noop, item: index, taskKey: key, source: item.source, context: context)]
        }
        let download = RemoteTaskOperation(.download, item: index, taskKey: key, source: item.source, context: context)
        if let host = BatchOperation.originHost(of: item.source) {
            // Taken when the download starts, released when it finishes: a cluster-wide cap, since
            // every remote download of the cluster is an operation of this process. Batches waiting for
            // the same host take turns (a small batch is not held back behind a large one's downloads).
            download.addCondition(MutualExclusion(category: "download-host:\(host)", limit: maxDownloadsPerHost,
                                                  group: sharesHosts ? batchID : ""))
        }
        // The output's name is unique within the batch (BatchRegistry); used only with a sink.
        let tiltShift = RemoteTaskOperation(.tiltShift, item: index, taskKey: key + 1, source: item.source,
                                            sinkName: sink.isEmpty ? "" : item.outputName, context: context,
                                            priority: 1)  // finish started items before starting new ones
        // Injection: requires the download's success; a failed or cancelled download cancels the
        // tilt-shift with an InjectionError that carries the download's error as its cause.
        try tiltShift.injectResult(from: download, policy: .requireSuccess) { tiltShift, download, _ in
            tiltShift.inject(from: download)
        }
        // Locality: the worker that downloads keeps the bytes and a slot for the tilt-shift.
        download.dependentKey.store(tiltShift.taskKey, ordering: .relaxed)
        return [download, tiltShift]
    }
}
