import Wire

/// The names a `BatchOutputCollector` writes a batch's items under, one per item, whatever order the items
/// finish in.
///
/// With `.tree`, an item's name is the one it was submitted with (`BatchItem.output_name`, a relative path,
/// checked where it is written), else the one its result carries (`results`, `retry`: the coordinator
/// echoes it); two items that came with the same name (a batch not submitted by this client) get `-2`, `-3`…
/// With `.flat`, the names are made in item order from every item known (`know(_:)`): the last component of
/// its submitted name, else of its source, as `submit --flat` makes them; items only a result names come after.
struct OutputNames {
    let layout: OutputLayout
    private var assigned: [Int: String] = [:]
    private var treeNames = DistinctNames()
    private var flat = OutputNaming()
    /// Items up to here were named in order (`.flat`).
    private var knownCount = 0

    init(layout: OutputLayout) {
        self.layout = layout
    }

    /// Names, in order, the items not named yet whose name or source is known (`.flat` only: tree names need
    /// no order).
    mutating func know(_ items: [BatchItem]) {
        guard layout == .flat, knownCount < items.count else { return }
        for index in knownCount..<items.count where assigned[index] == nil {
            let item = items[index]
            if !item.outputName.isEmpty {
                assigned[index] = flat.stem(forName: lastComponent(item.outputName))
            } else if !item.source.isEmpty, !item.source.hasPrefix("item ") {  // "item N": a placeholder, no source
                assigned[index] = flat.stem(for: item.source)
            }
        }
        knownCount = items.count
    }

    /// The name of item `index`: the one it was `submitted` with, else the one its result came with.
    mutating func name(of index: Int, submitted: String, finished: String) -> String {
        if let name = assigned[index] { return name }
        let given = !submitted.isEmpty ? submitted : (!finished.isEmpty ? finished : "item-\(index)")
        let name: String
        switch layout {
        case .flat:
            name = flat.stem(forName: lastComponent(given))
        case .tree:
            name = treeNames.claim(given)
        }
        assigned[index] = name
        return name
    }

    /// The last component of a relative output path.
    private func lastComponent(_ name: String) -> String {
        name.split(separator: "/").last.map(String.init) ?? name
    }
}
