import Wire

/// One batch as the coordinator's clients know it: its items (source, output name, which manifest listed
/// them), which have finished and how, and the task keys of those still running. A plain value, kept by
/// `BatchRegistry`; what runs the items is the core's `BatchRun`.
struct RegisteredBatch {
    /// Where an item is, as far as its clients are concerned.
    enum ItemState: UInt8 {
        /// Its operations run (or wait to).
        case unfinished
        /// A client cancelled it; it finishes (as cancelled, or with the result that beat the cancel) soon.
        case cancelling
        case succeeded
        case failed
        case cancelled

        var isFinished: Bool { self != .unfinished && self != .cancelling }
    }

    /// One input of the batch: all that a queued item costs until its turn comes (`BatchRun`), 48 bytes
    /// (its fields in this order pack into 47; short strings are stored inline).
    struct Item {
        let source: String
        /// The output's file name without extension (the client adds the extension of the output's format).
        let outputName: String
        /// The key of its first task; its other tasks have the keys that follow (`tasksPerItem` in all).
        /// 0: it has no tasks (it had finished before the coordinator restarted, or before a retry of others).
        var firstTaskKey: TaskKey
        /// The manifest item that listed it; `nil` for a submitted item.
        let parent: Int32?
        /// How many manifests deep it is: 0 for a submitted item.
        let depth: UInt8
        var state: ItemState
    }

    let batchID: String
    /// The client that submitted the batch; results are streamed there.
    let client: PeerIdentity
    /// Who the submitter is for the per-client limits (`ClientUsage`): its key, else its connection.
    var owner: ClientIdentity
    /// The client takes several finished items in one message (`SubmitBatch.acceptsBatches`).
    let clientAcceptsBatches: Bool
    /// Tasks per item: a download and a tilt-shift, or one no-op.
    let tasksPerItem: Int
    /// Its priority (`SubmitBatch.priority`) and idempotency key (`SubmitBatch.idempotencyKey`, "" for none),
    /// with the scope of the key (`ClientIdentity.idempotencyScope`).
    var priority: Int32 = 0
    var idempotencyKey = ""
    var idempotencyScope = ""
    /// Items in order (index = position): the submitted ones, then those manifests added.
    private(set) var items: [Item]
    private(set) var finishedCount = 0
    private(set) var succeeded: UInt32 = 0
    private(set) var failed: UInt32 = 0
    private(set) var cancelled: UInt32 = 0
    /// Why each failed or cancelled item did not succeed, by index.
    private var failures: [Int: TaskFailure] = [:]
    /// What each successful output looked like, without its bytes (kept only when results are kept).
    private var outputs: [Int: TaskOutput] = [:]
    /// The warnings of successful outputs that had any, by index (kept whether or not results are kept).
    private var warnings: [Int: [String]] = [:]
    /// Output names in use, for naming the items manifests add (made at the first expansion).
    private var naming: OutputNaming?
    /// The failed attempts of finished items that had any, by index (few: most items have none).
    private var failedAttempts: [Int: [AttemptStatus]] = [:]

    init(batchID: String, client: PeerIdentity, clientAcceptsBatches: Bool, tasksPerItem: Int) {
        self.batchID = batchID
        self.client = client
        self.owner = ClientIdentity(peer: client, key: nil)
        self.clientAcceptsBatches = clientAcceptsBatches
        self.tasksPerItem = tasksPerItem
        self.items = []
    }

    var isComplete: Bool { finishedCount == items.count }
    var unfinishedCount: Int { items.count - finishedCount }

    /// The keys of an item's tasks (empty for an item without tasks).
    func taskKeys(of index: Int) -> Range<TaskKey> {
        let first = items[index].firstTaskKey
        return first == 0 ? first..<first : first..<(first + TaskKey(tasksPerItem))
    }

    /// The batch's summary, as `BatchFinished` carries it.
    var summary: BatchFinished {
        BatchFinished(batchID: batchID, succeeded: succeeded, failed: failed, cancelled: cancelled)
    }

    // MARK: Growing

    /// Appends an item; with `recorded` (an outcome from the journal) it is finished already, and has no tasks
    /// (`firstTaskKey` 0).
    mutating func append(
        source: String, outputName: String, parent: Int32?, depth: UInt8, firstTaskKey: TaskKey,
        recorded: TaskOutcome?
    ) {
        items.append(
            Item(
                source: source, outputName: outputName, firstTaskKey: firstTaskKey, parent: parent,
                depth: depth, state: .unfinished))
        if let recorded { finish(items.count - 1, outcome: recorded, keepingOutput: true) }
    }

    /// An output name for an item a manifest adds: distinct from every name in the batch.
    mutating func outputName(for source: String) -> String {
        if naming == nil {
            var names = OutputNaming()
            for item in items { _ = names.stem(forName: item.outputName) }
            naming = names
        }
        return naming?.stem(for: source) ?? "item-\(items.count)"
    }

    /// Removes the last `count` items (an expansion whose operations could not be added).
    mutating func removeLast(_ count: Int) {
        items.removeLast(count)
    }

    /// Lets go of what only a running batch needs (the output names in use, for manifests that add
    /// items), once it has finished: a finished batch keeps only what status and `FetchResults` read.
    mutating func releaseRunningState() {
        naming = nil
    }

    // MARK: Finishing

    /// Marks an unfinished item cancelling; `false` when it had finished or was cancelling already.
    mutating func markCancelling(_ index: Int) -> Bool {
        guard items.indices.contains(index), items[index].state == .unfinished else { return false }
        items[index].state = .cancelling
        return true
    }

    /// Records an item's outcome; `false` when it had finished already (or is out of range).
    @discardableResult
    mutating func finish(_ index: Int, outcome: TaskOutcome, keepingOutput: Bool) -> Bool {
        guard items.indices.contains(index), !items[index].state.isFinished else { return false }
        finishedCount += 1
        switch outcome {
        case .output(let output):
            items[index].state = .succeeded
            succeeded += 1
            if !output.warnings.isEmpty { warnings[index] = output.warnings }
            if keepingOutput || !output.location.isEmpty {
                // Metadata only: the bytes are in the results directory, or in the batch's sink (`location`).
                var kept = output
                kept.data = []
                outputs[index] = kept
            }
        case .failure(let failure) where failure.code == .cancelled:
            items[index].state = .cancelled
            cancelled += 1
            failures[index] = failure
        case .failure(let failure):
            items[index].state = .failed
            failed += 1
            failures[index] = failure
        }
        return true
    }

    // MARK: Running again

    /// Makes the finished items `indexes` (failed or cancelled) unfinished again, with the tasks that
    /// start at `firstTaskKeys` (one per item, in order); every other item loses its task keys (its
    /// operations are not planned again). The counts go back by their outcomes, and the last failed
    /// attempt of each counts as retried: another attempt follows, at the client's request.
    mutating func reopen(_ indexes: [Int], firstTaskKeys: [TaskKey]) {
        for index in items.indices { items[index].firstTaskKey = 0 }
        for (index, key) in zip(indexes, firstTaskKeys)
        where items.indices.contains(index) && items[index].state.isFinished {
            switch items[index].state {
            case .succeeded: succeeded -= 1
            case .failed: failed -= 1
            case .cancelled: cancelled -= 1
            case .unfinished, .cancelling: break
            }
            finishedCount -= 1
            failures[index] = nil
            outputs[index] = nil
            warnings[index] = nil
            if var attempts = failedAttempts[index], !attempts.isEmpty {
                attempts[attempts.count - 1].retried = true
                failedAttempts[index] = attempts
            }
            items[index].state = .unfinished
            items[index].firstTaskKey = key
        }
    }

    /// The index of the item `name` names: its output name, else its source, else its index in decimal;
    /// `nil` when none does.
    func itemIndex(named name: String) -> Int? {
        if let index = items.firstIndex(where: { $0.outputName == name }) { return index }
        if let index = items.firstIndex(where: { $0.source == name }) { return index }
        if let index = Int(name), items.indices.contains(index) { return index }
        return nil
    }

    /// What a succeeded item's worker warned about (empty for most).
    func warnings(of index: Int) -> [String] { warnings[index] ?? [] }
    /// Keeps the failed attempts of a finished item's tasks, for status, after those of its earlier runs.
    mutating func noteFailedAttempts(_ attempts: [AttemptStatus], of index: Int) {
        failedAttempts[index, default: []] += attempts
    }

    /// The failed attempts of a finished item's tasks, oldest first (empty when it had none).
    func failedAttempts(of index: Int) -> [AttemptStatus] { failedAttempts[index] ?? [] }

    /// Why a finished item did not succeed (`nil` for a success or an unfinished item).
    func failure(of index: Int) -> TaskFailure? { failures[index] }

    /// A finished item as its client was told, its output without bytes (`nil` while unfinished).
    func finishedItem(_ index: Int) -> ItemFinished? {
        guard items.indices.contains(index) else { return nil }
        let outcome: TaskOutcome
        switch items[index].state {
        case .unfinished, .cancelling: return nil
        case .succeeded:
            var output = outputs[index] ?? TaskOutput(data: [])
            output.warnings = warnings(of: index)
            outcome = .output(output)
        case .failed, .cancelled: outcome = .failure(failures[index] ?? TaskFailure(code: .internal))
        }
        return ItemFinished(
            batchID: batchID, itemIndex: UInt32(index), outputName: items[index].outputName, outcome: outcome)
    }

    /// Where a succeeded item's output was written, when the batch has a sink; else empty.
    func location(of index: Int) -> String {
        outputs[index]?.location ?? ""
    }

    /// Finished items not yet in `sent`, in index order.
    func finishedIndexes(notIn sent: [Bool]) -> [Int] {
        items.indices.filter { items[$0].state.isFinished && !(sent.indices.contains($0) && sent[$0]) }
    }
}
