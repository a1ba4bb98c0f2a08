import Foundation
import Operations
import Wire

/// The operations of a submitted batch, as one group operation: per item, a remote download and a remote
/// tilt-shift into which the download's bytes are injected (or, for a benchmark batch, one remote no-op).
/// The group grows while it runs: an item whose download turns out to be a manifest adds the images it
/// lists (`add`). It stays open until the coordinator closes it once every item is done; cancelling it
/// cancels every item.
///
/// What the items are (sources, output names, outcomes) is the `BatchRegistry`'s business; this holds
/// only what runs them. `items` is read and grown only on the coordinator's actor.
final class BatchOperation: GroupOperation, @unchecked Sendable {
    /// One item's remote operations, in dependency order: each depends on the one before.
    struct Item: Sendable {
        let index: Int
        /// Empty for an item that had finished before the coordinator restarted.
        let tasks: [RemoteTaskOperation]
        /// The task whose result is the item's result (`nil` for an item without tasks).
        var last: RemoteTaskOperation? { tasks.last }
    }

    let batchID: String
    private let planner: ItemPlanner
    /// What every task of the batch shares (`planner.makeContext()`), held once for all of them.
    private let context: BatchTaskContext
    /// Items in order (index = position), as in the registry.
    private(set) var items: [Item]

    /// Plans the operations of `planned`'s items (none for those finished already).
    init(_ planned: RegisteredBatch, planner: ItemPlanner) throws {
        self.batchID = planned.batchID
        self.planner = planner
        let context = planner.makeContext()
        self.context = context
        var items: [Item] = []
        var children: [AsyncOperation] = []
        items.reserveCapacity(planned.items.count)
        children.reserveCapacity(planned.items.count * planned.tasksPerItem)
        for (index, item) in planned.items.enumerated() {
            let tasks = try planner.tasks(for: item, index: index, context: context)
            items.append(Item(index: index, tasks: tasks))
            children += tasks
        }
        self.items = items
        // At most `maxStartedTasks` children execute at once: a started remote operation holds a suspended
        // Swift task (about 5 KB), a waiting one only its object, which keeps a million queued tasks
        // within about 1.3 KB each (docs/benchmarks.md).
        super.init(name: "batch \(planned.batchID)", operations: children, maxConcurrentChildren: Self.maxStartedTasks,
                   keepsRunningUntilClosed: true)
    }

    /// Adds the operations of items a manifest added (`batch.items[first...]`); they start at once.
    ///
    /// - Throws: the engine's error when the group can no longer grow (it was cancelled and has finished).
    func add(_ batch: RegisteredBatch, from first: Int) throws -> ArraySlice<Item> {
        var added: [Item] = []
        for index in first..<batch.items.count {
            added.append(Item(index: index, tasks: try planner.tasks(for: batch.items[index], index: index, context: context)))
        }
        try addChildren(added.flatMap(\.tasks))
        items += added
        return items[first...]
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

    /// How an item ended: its last operation's output, or the root cause of its failure (from the worker
    /// when there is one). Takes the output over, so that the coordinator holds it once.
    static func outcome(of item: Item) -> TaskOutcome {
        if let last = item.last, last.state == .finished, let output = last.takeOutput() {
            return .output(output)
        }
        return .failure(failure(of: item))
    }

    /// Why an item did not succeed: the root cause, from the worker when there is one.
    static func failure(of item: Item) -> TaskFailure {
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
            if let deadline = error as? BatchDeadlineError {
                return TaskFailure(code: .cancelled, message: deadline.description)
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
