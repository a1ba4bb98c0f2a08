import Foundation
import Operations
import Wire

/// A submitted batch as a group operation: per item, a remote download and a remote tilt-shift into
/// which the download's bytes are injected (or, for a benchmark batch, one remote no-op). The group
/// grows while it runs: an item whose download turns out to be a manifest adds the images it lists
/// (`expand`). It stays open until the coordinator closes it once every item is done; cancelling it
/// cancels every item, on whichever worker it runs.
///
/// `items` is read and grown only on the coordinator's actor.
final class BatchOperation: GroupOperation, @unchecked Sendable {
    /// One input: its remote tasks, in dependency order, and where its output goes.
    struct Item: Sendable {
        let index: Int
        let source: String
        let outputName: String
        /// The item's tasks; each depends on the one before. Empty for an item that had finished
        /// before the coordinator restarted (see `recorded`).
        let tasks: [RemoteTaskOperation]
        /// The outcome from the journal of an item that finished before the coordinator restarted.
        let recorded: TaskOutcome?
        /// The manifest item that listed this one (`nil` for a submitted item).
        let parent: Int?
        /// How many manifests deep the item is: 0 for a submitted item.
        let depth: Int
        /// The task whose result is the item's result (`nil` for a recorded item).
        var last: RemoteTaskOperation? { tasks.last }
    }

    let batchID: String
    /// The client that submitted the batch; results are streamed there.
    let client: PeerIdentity
    let parameters: WireTiltShiftParameters
    private let planner: ItemPlanner
    /// Items in order (index = position): the submitted ones, then those manifests added.
    private(set) var items: [Item]
    /// Output names in use, for naming the items manifests add.
    private var naming: OutputNaming?
    /// The client takes several finished items in one message (`SubmitBatch.acceptsBatches`).
    let clientAcceptsBatches: Bool

    /// Plans a batch. Items in `finished` (recovered from the journal) get no tasks: they keep their
    /// recorded outcome. `parents` gives, for items a manifest added (recovered from the journal), the
    /// manifest item's index. Task attempts start at `firstAttempt`, so that those of a restarted
    /// coordinator never match a late result meant for an earlier one.
    init(batchID: String, client: PeerIdentity, sources: [BatchItem], parameters: WireTiltShiftParameters,
         kind: TaskKind = .unspecified, maxDownloadsPerHost: Int = ClusterDefaults.maxDownloadsPerHost,
         finished: [Int: TaskOutcome] = [:], parents: [Int: Int] = [:], firstAttempt: UInt32 = 1,
         runner: any RemoteTaskRunning, clientAcceptsBatches: Bool = false) throws {
        self.batchID = batchID
        self.clientAcceptsBatches = clientAcceptsBatches
        self.client = client
        self.parameters = parameters
        let planner = ItemPlanner(
            batchID: batchID, parameters: parameters, kind: kind, maxDownloadsPerHost: maxDownloadsPerHost,
            firstAttempt: firstAttempt, runner: runner)
        self.planner = planner
        var items: [Item] = []
        var children: [AsyncOperation] = []
        items.reserveCapacity(sources.count)
        children.reserveCapacity(sources.count * 2)
        for (index, source) in sources.enumerated() {
            let parent = parents[index]
            let depth = parent.map { items.indices.contains($0) ? items[$0].depth + 1 : 1 } ?? 0
            let item = try planner.item(index: index, source: source, parent: parent, depth: depth, recorded: finished[index])
            items.append(item)
            children += item.tasks
        }
        self.items = items
        // At most `maxStartedTasks` children execute at once: a started remote operation holds a suspended
        // Swift task (about 5 KB), a waiting one only its object, which keeps a million queued tasks
        // within about 1.3 KB each (docs/benchmarks.md).
        super.init(name: "batch \(batchID)", operations: children, maxConcurrentChildren: Self.maxStartedTasks,
                   keepsRunningUntilClosed: true)
    }

    /// Adds the images a manifest item listed as new items (their tasks start at once) and returns the
    /// announcement for clients and the journal.
    func expand(_ manifestItem: Item, into sources: [String]) throws -> ItemsAdded {
        if naming == nil {
            var names = OutputNaming()
            for item in items { _ = names.stem(forName: item.outputName) }
            naming = names
        }
        let firstIndex = items.count
        var added: [BatchItem] = []
        var newItems: [Item] = []
        for (offset, source) in sources.enumerated() {
            let batchItem = BatchItem(source: source, outputName: naming?.stem(for: source) ?? "item-\(firstIndex + offset)")
            added.append(batchItem)
            newItems.append(try planner.item(
                index: firstIndex + offset, source: batchItem, parent: manifestItem.index, depth: manifestItem.depth + 1,
                recorded: nil))
        }
        try addChildren(newItems.flatMap(\.tasks))
        items += newItems
        return ItemsAdded(batchID: batchID, parentIndex: UInt32(manifestItem.index), firstIndex: UInt32(firstIndex), items: added)
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
        guard let last = item.last else {
            switch item.recorded {
            case .failure(let failure)?: return (failure.code == .cancelled ? "cancelled" : "failed", failure.message)
            case .output?, nil: return ("succeeded", "")
            }
        }
        switch last.state {
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
        if case .failure(let failure)? = item.recorded { return failure }
        var errors = item.last?.errors ?? []
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
        return TaskFailure(code: .internal, message: "\(item.last?.name ?? "item \(item.index)") did not succeed")
    }
}

/// The error with which items cancelled by a client's request finish.
struct BatchCancelledError: Error, CustomStringConvertible {
    let batchID: String
    var description: String { "cancelled by request (batch \(batchID))" }
}
