import Wire

/// A batch that grows while it runs: a manifest item's entries become items of its batch.
extension BatchRegistry {
    /// Adds the entries a manifest item listed to its batch, as new items with output names and task keys.
    /// The caller plans their operations, or takes them back with `retract` if that fails.
    ///
    /// - Throws: `ManifestRefusal` when the manifest is nested too deep, or would make the batch larger
    ///   than `maxBatchItems`.
    mutating func expand(item index: Int, of batchID: String, entries: [String]) throws(ManifestRefusal) -> ItemsAdded {
        guard var batch = batches[batchID], batch.items.indices.contains(index) else {
            throw ManifestRefusal("its batch is no longer known")
        }
        let depth = batch.items[index].depth
        guard depth < ClusterDefaults.maxManifestDepth else {
            throw ManifestRefusal(
                "it is a manifest listed by a manifest \(depth) levels deep; manifests may nest "
                    + "\(ClusterDefaults.maxManifestDepth) levels")
        }
        if let (offset, problem) = entries.lazy.enumerated()
            .compactMap({ entry in PeerInputRules.sourceProblem(entry.element).map { (entry.offset, $0) } }).first
        {
            throw ManifestRefusal("its entry \(offset + 1): \(problem)")
        }
        guard batch.items.count + entries.count <= limits.maxBatchItems else {
            throw ManifestRefusal(
                "this manifest lists \(entries.count) images, which would make the batch larger than "
                    + "\(limits.maxBatchItems) items (the coordinator's --max-batch-items): split the manifest")
        }
        batches[batchID] = nil  // no copy while it grows
        let firstIndex = batch.items.count
        var added: [BatchItem] = []
        for source in entries {
            let name = batch.outputName(for: source)
            added.append(BatchItem(source: source, outputName: name))
            batch.append(
                source: source, outputName: name, parent: Int32(index), depth: depth + 1,
                firstTaskKey: takeTaskKeys(batch.tasksPerItem), recorded: nil)
        }
        pendingItems[batch.client, default: 0] += entries.count
        changeUsage(of: batch.owner, queuedItems: entries.count)
        batches[batchID] = batch
        return ItemsAdded(batchID: batchID, parentIndex: UInt32(index), firstIndex: UInt32(firstIndex), items: added)
    }

    /// Takes back the items of an expansion whose operations could not be added.
    mutating func retract(_ added: ItemsAdded) {
        guard let batch = batches[added.batchID], batch.items.count == Int(added.firstIndex) + added.items.count else {
            return
        }
        batches[added.batchID]?.removeLast(added.items.count)
        reducePending(of: batch.client, by: added.items.count)
        changeUsage(of: batch.owner, queuedItems: -added.items.count)
    }
}
