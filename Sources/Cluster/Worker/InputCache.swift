import Wire

/// The images this worker downloaded, kept for the tilt-shift that will use them: the coordinator
/// sends that tilt-shift here with a reference (`InjectedInput.onWorker`) instead of the bytes
/// (locality). Bounded by bytes; the oldest entries go first. Owned by the worker's actor.
struct InputCache {
    private struct Entry {
        let data: [UInt8]
        let mediaType: String
    }

    /// The most bytes kept; an image larger than this is not kept at all.
    let capacityBytes: Int
    private var entries: [String: Entry] = [:]
    /// Task IDs in the order they were stored (entries taken meanwhile are skipped when evicting).
    private var order: [String] = []
    private var orderStart = 0
    private(set) var totalBytes = 0

    init(capacityBytes: Int) {
        self.capacityBytes = max(0, capacityBytes)
    }

    /// How many images are kept.
    var count: Int { entries.count }

    /// Keeps a download's image for its tilt-shift and returns the outcome to report: with
    /// `TaskAssignment.keepOutput`, its metadata only (`TaskOutput.heldOnWorker`), or a `limit` failure
    /// when the image is larger than the whole cache; without it (an older coordinator), the bytes.
    mutating func keep(_ output: TaskOutput, of assignment: TaskAssignment, capacityOption: String) -> TaskOutcome {
        let stored = store(assignment.taskID, data: output.data, mediaType: output.mediaType)
        guard assignment.keepOutput else { return .output(output) }
        guard stored else {
            return .failure(
                TaskFailure(
                    code: .limit,
                    message:
                        "\(assignment.source): the image (\(output.data.count >> 20) MiB) is larger than this worker's input cache "
                        + "(\(capacityBytes >> 20) MiB): start the workers with a larger \(capacityOption)"))
        }
        return .output(TaskOutput(heldOnWorker: true, size: UInt64(output.data.count), mediaType: output.mediaType))
    }

    /// Keeps the output of download task `taskID`, evicting the oldest entries to make room. Returns
    /// `false` when it is larger than the whole cache (then it is not kept).
    @discardableResult
    mutating func store(_ taskID: String, data: [UInt8], mediaType: String) -> Bool {
        guard data.count <= capacityBytes else { return false }
        if let previous = entries.removeValue(forKey: taskID) { totalBytes -= previous.data.count }
        while totalBytes + data.count > capacityBytes, orderStart < order.count {
            let oldest = order[orderStart]
            orderStart += 1
            if let evicted = entries.removeValue(forKey: oldest) { totalBytes -= evicted.data.count }
        }
        entries[taskID] = Entry(data: data, mediaType: mediaType)
        totalBytes += data.count
        order.append(taskID)
        if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
        return true
    }

    /// Hands over (and forgets) the output of download task `taskID`, if it is still kept.
    mutating func take(_ taskID: String) -> (data: [UInt8], mediaType: String)? {
        guard let entry = entries.removeValue(forKey: taskID) else { return nil }
        totalBytes -= entry.data.count
        return (entry.data, entry.mediaType)
    }

    /// Forgets everything (the coordinator registered this worker again and holds no reference to it).
    mutating func removeAll() {
        entries = [:]
        order = []
        orderStart = 0
        totalBytes = 0
    }

    /// `assignment` with its `onWorker` inputs filled from the cache, or `nil` when one is missing.
    mutating func resolve(_ assignment: TaskAssignment) -> TaskAssignment? {
        var resolved = assignment
        for index in resolved.inputs.indices where resolved.inputs[index].onWorker {
            guard let cached = take(resolved.inputs[index].fromTaskID) else { return nil }
            resolved.inputs[index].data = cached.data
            resolved.inputs[index].mediaType = cached.mediaType
            resolved.inputs[index].onWorker = false
        }
        return resolved
    }
}
