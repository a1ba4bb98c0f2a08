import Foundation
import Operations
import Wire

/// A submitted batch as a group operation: per item, a remote download and a remote tilt-shift into
/// which the download's bytes are injected (or, for a benchmark batch, one remote no-op). The group
/// finishes after every item, items added while it runs included; cancelling it cancels every item, on
/// whichever worker it runs.
final class BatchOperation: GroupOperation, @unchecked Sendable {
    /// One input: its remote tasks, in dependency order, and where its output goes.
    struct Item: Sendable {
        let index: Int
        let source: String
        let outputName: String
        /// The item's tasks; each depends on the one before.
        let tasks: [RemoteTaskOperation]
        /// The task whose result is the item's result.
        var last: RemoteTaskOperation { tasks[tasks.count - 1] }
    }

    let batchID: String
    /// The client that submitted the batch; results are streamed there.
    let client: PeerIdentity
    let parameters: WireTiltShiftParameters
    /// Items in submission order (index = position).
    let items: [Item]
    /// The client takes several finished items in one message (`SubmitBatch.acceptsBatches`).
    let clientAcceptsBatches: Bool

    init(batchID: String, client: PeerIdentity, sources: [BatchItem], parameters: WireTiltShiftParameters,
         kind: TaskKind = .unspecified, maxDownloadsPerHost: Int = ClusterDefaults.maxDownloadsPerHost,
         runner: any RemoteTaskRunning, clientAcceptsBatches: Bool = false) throws {
        self.batchID = batchID
        self.clientAcceptsBatches = clientAcceptsBatches
        self.client = client
        self.parameters = parameters
        var items: [Item] = []
        var children: [AsyncOperation] = []
        items.reserveCapacity(sources.count)
        children.reserveCapacity(sources.count * 2)
        for (index, source) in sources.enumerated() {
            let outputName = source.outputName.isEmpty ? "item-\(index)" : source.outputName
            if kind == .noop {
                let noop = RemoteTaskOperation(
                    TaskAssignment(taskID: "\(batchID)/\(index)", batchID: batchID, attempt: 1, kind: .noop,
                                   source: source.source),
                    runner: runner)
                items.append(Item(index: index, source: source.source, outputName: outputName, tasks: [noop]))
                children.append(noop)
                continue
            }
            let download = RemoteTaskOperation(
                TaskAssignment(taskID: "\(batchID)/\(index)/download", batchID: batchID, attempt: 1,
                               kind: .download, source: source.source),
                runner: runner)
            if let host = Self.originHost(of: source.source) {
                // Taken when the download starts, released when it finishes: a cluster-wide cap, since
                // every remote download of the cluster is an operation of this process.
                download.addCondition(MutualExclusion(category: "download-host:\(host)", limit: maxDownloadsPerHost))
            }
            let tiltShift = RemoteTaskOperation(
                TaskAssignment(taskID: "\(batchID)/\(index)/tilt-shift", batchID: batchID, attempt: 1,
                               kind: .tiltShift, source: source.source, parameters: parameters),
                runner: runner, priority: 1)  // finish started items before starting new ones
            // Injection: requires the download's success; a failed or cancelled download cancels the
            // tilt-shift with an InjectionError that carries the download's error as its cause.
            try tiltShift.injectResult(from: download, policy: .requireSuccess) { tiltShift, download, _ in
                tiltShift.inject(from: download)
            }
            items.append(Item(index: index, source: source.source, outputName: outputName, tasks: [download, tiltShift]))
            children += [download, tiltShift]
        }
        self.items = items
        // At most `maxStartedTasks` children execute at once: a started remote operation holds a suspended
        // Swift task (about 5 KB), a waiting one only its object, which keeps a million queued tasks
        // within about 1.3 KB each (docs/benchmarks.md).
        super.init(name: "batch \(batchID)", operations: children, maxConcurrentChildren: Self.maxStartedTasks)
    }

    /// Children of one batch that may execute at once, i.e. be queued in the dispatcher or run on a
    /// worker. Far above any cluster's slot count, far below a large batch.
    static let maxStartedTasks = 4_096

    /// The host (and port) an `http(s)` source is downloaded from; `nil` for local files.
    static func originHost(of source: String) -> String? {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// The state of one item as `shiftwork status BATCH` shows it.
    func itemState(_ item: Item, dispatcher: Dispatcher) -> (state: String, error: String) {
        switch item.last.state {
        case .finished:
            return ("succeeded", "")
        case .failed, .cancelled:
            let failure = Self.failure(of: item)
            return (failure.code == .cancelled ? "cancelled" : "failed", failure.message)
        case .pending, .ready, .executing:
            for task in item.tasks {
                switch dispatcher.state(of: task.template.taskKey) {
                case .running?, .cancelling?: return ("running", "")
                case .queued?, nil: continue
                }
            }
            return ("queued", "")
        }
    }

    /// Why an item did not succeed: the root cause, from the worker when there is one.
    static func failure(of item: Item) -> TaskFailure {
        var errors = item.last.errors
        // Unwrap injection and dependency errors down to the download's own failure.
        while let error = errors.first {
            if let remote = error as? RemoteTaskError { return remote.failure }
            if let injection = error as? InjectionError, !injection.underlyingErrors.isEmpty {
                errors = injection.underlyingErrors
                continue
            }
            if let dependency = error as? DependencyFailedError, !dependency.underlyingErrors.isEmpty {
                errors = dependency.underlyingErrors
                continue
            }
            if let cancelled = error as? BatchCancelledError {
                return TaskFailure(code: .cancelled, message: cancelled.description)
            }
            return TaskFailure(code: .internal, message: "\(error)")
        }
        if item.tasks.contains(where: { $0.state == .cancelled }) {
            return TaskFailure(code: .cancelled, message: "cancelled")
        }
        return TaskFailure(code: .internal, message: "\(item.last.name) did not succeed")
    }
}

/// The error with which items cancelled by a client's request finish.
struct BatchCancelledError: Error, CustomStringConvertible {
    let batchID: String
    var description: String { "cancelled by request (batch \(batchID))" }
}
