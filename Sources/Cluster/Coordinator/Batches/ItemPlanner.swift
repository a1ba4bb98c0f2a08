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

    /// The operations of the item at `index`, in dependency order; none for an item without task keys
    /// (it had finished before the coordinator restarted).
    func tasks(for item: RegisteredBatch.Item, index: Int) throws -> [RemoteTaskOperation] {
        let key = item.firstTaskKey
        guard key != 0 else { return [] }
        if kind == .noop {
            return [RemoteTaskOperation(
                TaskAssignment(taskID: "\(batchID)/\(index)", batchID: batchID, attempt: firstAttempt, kind: .noop,
                               source: item.source, taskKey: key),
                itemIndex: index, runner: runner, retrySchedule: retrySchedule)]
        }
        var filter = TaskAssignment(taskID: "\(batchID)/\(index)/tilt-shift", batchID: batchID, attempt: firstAttempt,
                                    kind: .tiltShift, source: item.source, parameters: parameters, taskKey: key + 1)
        if !sink.isEmpty {
            filter.sink = sink
            filter.sinkName = item.outputName  // unique within the batch (BatchRegistry)
            filter.s3Endpoint = s3Endpoint
        }
        var fetch = TaskAssignment(taskID: "\(batchID)/\(index)/download", batchID: batchID, attempt: firstAttempt,
                                   kind: .download, source: item.source, taskKey: key)
        // The image stays on the worker that downloads it; only its metadata comes here (a manifest's list does).
        fetch.keepOutput = true
        fetch.s3Endpoint = s3Endpoint
        // Chained: a worker that accepts it runs the tilt-shift right after the download, in the same slot
        // (`ChainedFollowOns`), as the tilt-shift would first be sent on its own: by reference to the image.
        var followOn = filter
        followOn.inputs = [Lineage.input(from: fetch, output: Lineage.heldImage)]
        let download = RemoteTaskOperation(fetch, itemIndex: index, runner: runner, retrySchedule: retrySchedule,
                                           followOn: followOn, endsItem: false)
        if let host = BatchOperation.originHost(of: item.source) {
            // Taken when the download starts, released when it finishes: a cluster-wide cap, since
            // every remote download of the cluster is an operation of this process. Batches waiting for
            // the same host take turns (a small batch is not held back behind a large one's downloads).
            download.addCondition(MutualExclusion(category: "download-host:\(host)", limit: maxDownloadsPerHost,
                                                  group: sharesHosts ? batchID : ""))
        }
        let tiltShift = RemoteTaskOperation(filter, itemIndex: index, runner: runner, priority: 1, retrySchedule: retrySchedule)  // finish started items before starting new ones
        // Injection: requires the download's success; a failed or cancelled download cancels the
        // tilt-shift with an InjectionError that carries the download's error as its cause.
        try tiltShift.injectResult(from: download, policy: .requireSuccess) { tiltShift, download, _ in
            tiltShift.inject(from: download)
        }
        // Locality: the worker that downloads keeps the bytes and a slot for the tilt-shift.
        download.dependentKey.store(tiltShift.template.taskKey, ordering: .relaxed)
        return [download, tiltShift]
    }
}
