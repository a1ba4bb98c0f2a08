import Foundation
import Wire

/// A batch's running part, as a value: a group of items with their tasks, started in turn. At most
/// `maxStartedItems` items of a batch have tasks at once; the next start as earlier ones finish, and
/// items a manifest adds join the end (the group grows while it runs). What the items are (sources,
/// outcomes, audiences) stays the `BatchRegistry`'s.
struct BatchRun {
    let batchID: String
    let kind: TaskKind
    let parameters: WireTiltShiftParameters
    let sink: String
    let s3Endpoint: String
    /// The attempt number of a task's first attempt: from this start of the coordinator (`incarnation`).
    let firstAttempt: UInt32
    let retrySchedule: TaskRetrySchedule
    /// Batches take turns for an origin host's downloads (fair share); `false`: one line for all.
    let sharesHosts: Bool
    /// Whether downloads count against a per-host cap (`DownloadTurns`).
    let capsHosts: Bool
    /// Items with tasks now, by index.
    var items: [Int: ItemRun] = [:]
    /// Items before this index have had their turn.
    private(set) var nextIndex = 0
    /// Failed attempts a previous run of the coordinator journaled, by item, for items not started yet.
    var restoredAttempts: [Int: [AttemptStatus]] = [:]
    /// The submitted items that are a client's local files, uploaded (`BatchItem.upload`), by index.
    let uploads: [Int: UploadMetadata]

    /// Items of one batch with tasks at once: far above any cluster's slot count, far below a large batch.
    static let maxStartedItems = 4_096

    /// `uploads`: the submission's upload items when `submit` no longer lists its items (`RerunPlan`).
    init(
        batchID: String, submit: SubmitBatch, firstAttempt: UInt32, sharesHosts: Bool, capsHosts: Bool,
        uploads: [Int: UploadMetadata]? = nil
    ) {
        self.batchID = batchID
        kind = submit.kind
        parameters =
            submit.parameters
            ?? WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10)
        sink = submit.sink
        s3Endpoint = submit.s3Endpoint
        self.firstAttempt = firstAttempt
        retrySchedule = TaskRetrySchedule(submit)
        self.sharesHosts = sharesHosts
        self.capsHosts = capsHosts
        self.uploads = uploads ?? Self.uploads(of: submit)
    }

    /// The items of `submit` that are a client's local files, by index.
    static func uploads(of submit: SubmitBatch) -> [Int: UploadMetadata] {
        var uploads: [Int: UploadMetadata] = [:]
        for (index, item) in submit.items.enumerated() { if let upload = item.upload { uploads[index] = upload } }
        return uploads
    }

    /// The group this batch's downloads wait in for a host's turn.
    var hostGroup: String { sharesHosts ? batchID : "" }

    /// Starts the items of `registered` whose turn has come, up to `maxStartedItems`: those unfinished and
    /// with task keys (the others are passed over). Returns their indexes.
    mutating func startNext(in registered: RegisteredBatch) -> [Int] {
        var started: [Int] = []
        while items.count < Self.maxStartedItems, nextIndex < registered.items.count {
            let index = nextIndex
            nextIndex += 1
            let entry = registered.items[index]
            guard entry.state == .unfinished, entry.firstTaskKey != 0 else { continue }
            items[index] = makeRun(entry, index: index)
            started.append(index)
        }
        return started
    }

    /// Whether item `index` has not had its turn yet (no tasks were made for it).
    func isWaitingForTurn(_ index: Int) -> Bool { index >= nextIndex }

    /// The tasks of an item, in dependency order: a no-op, or a download and a tilt-shift that consumes it.
    private mutating func makeRun(_ item: RegisteredBatch.Item, index: Int) -> ItemRun {
        let key = item.firstTaskKey
        let restored = restoredAttempts.removeValue(forKey: index) ?? []
        if kind == .noop {
            let noop = TaskAssignment(
                taskID: "\(batchID)/\(index)", batchID: batchID, attempt: firstAttempt, kind: .noop,
                source: item.source, taskKey: key)
            return ItemRun(
                index: index, tasks: [noop], followOn: nil, host: nil, retrySchedule: retrySchedule,
                restoredAttempts: restored)
        }
        var filter = TaskAssignment(
            taskID: "\(batchID)/\(index)/tilt-shift", batchID: batchID, attempt: firstAttempt,
            kind: .tiltShift, source: item.source, parameters: parameters, taskKey: key + 1)
        if !sink.isEmpty {
            filter.sink = sink
            filter.sinkName = item.outputName  // unique within the batch (BatchRegistry)
            filter.s3Endpoint = s3Endpoint
        }
        if uploads[index] != nil {
            // An uploaded file: no download; the tilt-shift waits for the bytes (`UploadWindow`).
            return ItemRun(
                index: index, tasks: [filter], followOn: nil, host: nil, retrySchedule: retrySchedule,
                restoredAttempts: restored, awaitsUpload: true)
        }
        var fetch = TaskAssignment(
            taskID: "\(batchID)/\(index)/download", batchID: batchID, attempt: firstAttempt,
            kind: .download, source: item.source, taskKey: key)
        // The image stays on the worker that downloads it; only its metadata comes here (a manifest's list does).
        fetch.keepOutput = true
        fetch.s3Endpoint = s3Endpoint
        // Chained: a worker that accepts it runs the tilt-shift right after the download, in the same slot.
        var followOn = filter
        followOn.inputs = [Lineage.input(from: fetch, output: Lineage.heldImage)]
        return ItemRun(
            index: index, tasks: [fetch, filter], followOn: followOn,
            host: capsHosts ? Self.originHost(of: item.source) : nil,
            retrySchedule: retrySchedule, restoredAttempts: restored)
    }

    /// The host (and port) an `http(s)` source is downloaded from; `nil` for local files.
    static func originHost(of source: String) -> String? {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
