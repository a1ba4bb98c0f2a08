import Foundation
import Operations
import Wire

/// The operations of a submitted batch, as one group operation: per item, a remote download and a remote
/// tilt-shift into which the download's bytes are injected (or, for a benchmark batch, one remote no-op).
///
/// An item's operations are made only when its turn comes (`planNext`): at most `plannedItemWindow` items
/// of a batch have operations at once, and the coordinator plans the next ones as earlier items finish.
/// A queued item that has not had its turn costs only its entry in the registry (`RegisteredBatch.Item`),
/// not an operation object, a task name and the engine's bookkeeping (docs/benchmarks.md, "Memory per
/// queued task"). The group stays open until the coordinator closes it once every item is done, so items
/// still to plan and those a manifest adds keep it running; cancelling it cancels the planned items (the
/// coordinator finishes those not planned yet itself, see `Coordinator.carryOut`).
///
/// What the items are (sources, output names, outcomes) is the `BatchRegistry`'s business; this holds
/// only what runs them. Everything here is read and changed only on the coordinator's actor.
final class BatchOperation: GroupOperation, @unchecked Sendable {
    /// One item's remote operations, in dependency order: each depends on the one before.
    struct Item: Sendable {
        let index: Int
        /// Empty for an item that finishes without operations (see `failure`).
        let tasks: [RemoteTaskOperation]
        /// Why an item without operations ended: cancelled before its turn, or it could not be planned.
        var failure: TaskFailure?
        /// The task whose result is the item's result (`nil` for an item without tasks).
        var last: RemoteTaskOperation? { tasks.last }
    }

    /// An item whose end the coordinator is to handle (`Coordinator.finishItems`).
    enum EndedItem: Sendable {
        /// A planned item whose last operation finished: its operations are `item(index)`.
        case planned(index: Int)
        /// An item that ends without operations (cancelled before its turn, or refused by the engine).
        case withoutOperations(Item)
    }

    let batchID: String
    private let planner: ItemPlanner
    /// Tasks per item (a download and a tilt-shift, or one no-op).
    let tasksPerItem: Int
    /// The items whose operations exist and whose end the coordinator has not handled yet, by index.
    private var planned: [Int: Item] = [:]
    /// Items before this index have had their turn (planned, finished before, or finished without operations).
    private(set) var nextIndex = 0
    /// Failed attempts a previous run of the coordinator journaled for unfinished items, by index: given
    /// to their operations when they are planned.
    private var restoredAttempts: [Int: [AttemptStatus]] = [:]
    /// Told when a planned item's last operation finished (`childDidFinish`), on the thread that finished
    /// it: the coordinator gathers these and handles them on its actor.
    private let itemEnded: @Sendable (_ index: Int, _ batch: BatchOperation) -> Void

    /// A batch whose items are planned later (`planNext`), in turn, from the registry's `RegisteredBatch`.
    /// `itemEnded` is called, on the thread that finished it, when a planned item's last operation finishes.
    init(_ registered: RegisteredBatch, planner: ItemPlanner,
         itemEnded: @escaping @Sendable (_ index: Int, _ batch: BatchOperation) -> Void) {
        self.batchID = registered.batchID
        self.planner = planner
        self.itemEnded = itemEnded
        self.tasksPerItem = registered.tasksPerItem
        // At most `maxStartedTasks` children execute at once (queued in the dispatcher or running on a
        // worker: an external operation, it holds no Swift task meanwhile); the others wait for a place.
        // Finished children are let go: a running batch holds the operations of its planned items only.
        super.init(name: "batch \(registered.batchID)", maxConcurrentChildren: Self.maxStartedTasks,
                   keepsRunningUntilClosed: true, keepsFinishedChildren: false)
    }

    /// Items of a batch with operations at once. A planned item is one or two operations of about 1 KB
    /// each (with their engine state and names); a queued item not planned yet, its registry entry only.
    /// Twice `maxStartedTasks`: the group's queue keeps a backlog of planned operations, which a finishing
    /// child's runner takes up at once, as it would without the window (docs/benchmarks.md).
    static let plannedItemWindow = 2 * maxStartedTasks

    /// Items are planned in steps of at least this many (once the window has room for them), so that the
    /// coordinator plans once per many finished items, not once per item.
    static let planningStep = 1_024

    /// Whether the window has room for a step of items (`planNext` would plan some, if any are left).
    var hasRoomForItems: Bool { planned.count <= Self.plannedItemWindow - Self.planningStep }

    /// Children of one batch that may execute at once, i.e. be queued in the dispatcher or run on a
    /// worker. Far above any cluster's slot count, far below a large batch.
    static let maxStartedTasks = 4_096

    /// How many items have operations now (at most `plannedItemWindow`).
    var plannedItemCount: Int { planned.count }

    /// The operations of item `index`, while it has them (planned, and its end not handled yet).
    func item(_ index: Int) -> Item? { planned[index] }

    /// Whether item `index` has not had its turn yet (no operations were made for it).
    func isWaitingForTurn(_ index: Int) -> Bool { index >= nextIndex }

    /// Keeps the failed attempts of a previous run of the coordinator (its journal), by item: they show in
    /// status and count against the retries of the item's tasks once it is planned.
    func restore(failedAttempts: [Int: [AttemptStatus]]) {
        restoredAttempts.merge(failedAttempts) { _, new in new }
    }

    /// The failed attempts of an unfinished item's tasks so far, oldest first.
    func failedAttempts(ofItem index: Int) -> [AttemptStatus] {
        if let item = planned[index] { return item.tasks.flatMap(\.failedAttempts) }
        return restoredAttempts.isEmpty ? [] : restoredAttempts[index] ?? []
    }

    /// Plans the items of `registered` (the batch as the registry holds it) whose turn has come, until
    /// `plannedItemWindow` items have operations: those unfinished and with task keys; the others are
    /// passed over. Their operations are added to the group (they start at once once it runs).
    /// Returns the items planned, and those that could not be (the engine refused their operations: the
    /// group had finished, or was cancelled), each with why.
    func planNext(in registered: RegisteredBatch) -> (planned: [Item], refused: [Item]) {
        var added: [Item] = []
        var refused: [Item] = []
        while planned.count < Self.plannedItemWindow, nextIndex < registered.items.count {
            let index = nextIndex
            nextIndex += 1
            let entry = registered.items[index]
            guard entry.state == .unfinished, entry.firstTaskKey != 0 else { continue }
            do {
                let tasks = try planner.tasks(for: entry, index: index)
                if let attempts = restoredAttempts.removeValue(forKey: index) {
                    for task in tasks { task.restore(failedAttempts: attempts.filter { $0.task == task.template.kind.logName }) }
                }
                try addChildren(tasks)
                let item = Item(index: index, tasks: tasks)
                planned[index] = item
                added.append(item)
            } catch {
                let code: FailureCode = isCancelled ? .cancelled : .internal
                refused.append(Item(index: index, tasks: [], failure: TaskFailure(code: code, message: "could not be started: \(error)")))
            }
        }
        return (added, refused)
    }

    /// A child finished: if it was its item's last operation, the item has ended. (One hook for every item
    /// of the batch, instead of a completion handler per item: no closure, handler array or engine extras
    /// allocated per operation.)
    override func childDidFinish(_ child: AsyncOperation) {
        guard let task = child as? RemoteTaskOperation, task.endsItem else { return }
        itemEnded(task.itemIndex, self)
    }

    /// Forgets an item's operations once the coordinator handled its end (its place goes to the next item);
    /// returns them, if it had any.
    @discardableResult
    func release(_ index: Int) -> Item? {
        if !restoredAttempts.isEmpty { restoredAttempts[index] = nil }
        return planned.removeValue(forKey: index)
    }

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
        if let failure = item.failure { return .failure(failure) }
        if let last = item.last, last.state == .finished, let output = last.takeOutput() {
            return .output(output)
        }
        return .failure(failure(of: item))
    }

    /// How an item cancelled by the coordinator (`reason`: a client's cancel, a deadline) ends.
    static func failure(cancelledBy reason: any Error) -> TaskFailure {
        TaskFailure(code: .cancelled, message: "\(reason)")
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
            if error is BatchCancelledError || error is BatchDeadlineError { return failure(cancelledBy: error) }
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
