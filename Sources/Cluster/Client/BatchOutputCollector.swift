import Fetching
import Foundation
import Imaging
import Runtime
import Wire

/// Turns a batch's event stream into output files in a directory and a summary: what `submit`, `run`,
/// `results` and `retry` share.
///
/// Each item is written once, whatever the coordinator repeats (a client re-attaching after a
/// restart may be sent an item twice). File names come from the item's output name, decided before the
/// batch was submitted (`OutputNaming.names`): with the `.tree` layout a relative path whose folders are
/// made below `outputDirectory` (`OutputTree`: a name with `..`, an absolute path, NUL, or a folder that is
/// a link fails that item, never writes outside); with `.flat`, its last component made safe, in item order.
/// A name never leaves `outputDirectory`, and two items never share a file. A file already in the
/// directory is never replaced unless `overwrite` is set: the output takes the next free name
/// (`x-2.jpg`) and its outcome says so (`OutputFile`). Files are written on `ComputeThreads.shared`,
/// not on Swift's cooperative pool (in `shiftwork run` that pool also runs the coordinator and workers).
struct BatchOutputCollector {
    let outputDirectory: URL
    /// Whether an existing file of the same name is replaced (`--overwrite`).
    let overwrite: Bool
    /// The items as the client knows them (source and output name); for a batch the client did not
    /// submit, the sources only, and the names come with the results.
    let items: [BatchItem]
    /// Whether outputs may arrive as bytes to write (the output directory is created); `false` for a
    /// batch with a sink, whose outputs the workers wrote.
    var writesFiles = true
    /// Whether the outputs keep the folders their names hold (`.tree`) or all go to the top (`.flat`).
    var layout: OutputLayout = .tree

    /// A collector of a batch this client did not submit (`results`, `retry`): its items' sources as its
    /// status lists them (`nil`: none known; the output names come with the results either way).
    init(outputDirectory: URL, overwrite: Bool, itemsOf batch: BatchStatus?) {
        var items: [BatchItem] = []
        if let batch {
            items = Array(repeating: BatchItem(source: ""), count: Int(batch.itemCount))
            for item in batch.items where Int(item.itemIndex) < items.count {
                items[Int(item.itemIndex)] = BatchItem(source: item.source)
            }
        }
        self.init(outputDirectory: outputDirectory, overwrite: overwrite, items: items)
    }

    init(outputDirectory: URL, overwrite: Bool, items: [BatchItem], writesFiles: Bool = true) {
        (self.outputDirectory, self.overwrite, self.items, self.writesFiles) = (
            outputDirectory, overwrite, items, writesFiles
        )
    }

    func collect(
        _ events: AsyncThrowingStream<BatchEvent, any Error>, progress: @Sendable (BatchProgress) -> Void
    ) async throws -> BatchSummary {
        if writesFiles {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        }
        var items = self.items
        var outcomes: [ItemOutcome?] = Array(repeating: nil, count: items.count)
        var names = OutputNames(layout: layout)
        var batchID = ""
        var done = 0
        var expansions: [Int: Int] = [:]  // manifest item → images it added
        var retried: Set<Int>?  // for a retry: the items run again (the others are not awaited nor summarized)
        var total: Int { retried?.count ?? items.count }
        /// Writes one finished item's output (once) and reports it.
        func record(_ finished: ItemFinished) async {
            let index = Int(finished.itemIndex)
            guard items.indices.contains(index), outcomes[index] == nil else { return }
            let outcome: ItemOutcome
            if case .output(let output) = finished.outcome, ManifestList.isList(output) {
                outcome = ItemOutcome(
                    index: index, source: items[index].source, outputPath: nil, error: nil,
                    expandedInto: expansions[index] ?? 0)
            } else {
                names.know(items)
                let name = names.name(of: index, submitted: items[index].outputName, finished: finished.outputName)
                outcome = await write(finished, source: items[index].source, name: name, index: index)
            }
            outcomes[index] = outcome
            done += 1
            progress(.item(outcome, done: done, total: total))
        }
        for try await event in events {
            switch event {
            case .accepted(let id, let count), .attached(let id, let count):
                batchID = id
                if items.count < count {
                    items += (items.count..<count).map { BatchItem(source: "item \($0)") }
                    outcomes += Array(repeating: nil, count: count - outcomes.count)
                }
                if case .attached = event {
                    progress(.attached(batchID: id, itemCount: count))
                } else {
                    progress(.accepted(batchID: id, itemCount: count))
                }
            case .retrying(let accepted):
                batchID = accepted.batchID
                let count = Int(accepted.itemCount)
                if items.count < count {
                    items += (items.count..<count).map { BatchItem(source: "item \($0)") }
                    outcomes += Array(repeating: nil, count: count - outcomes.count)
                }
                retried = Set(accepted.itemIndexes.map { Int($0) })
                progress(.retrying(batchID: batchID, itemCount: accepted.itemIndexes.count, batchItemCount: count))
            case .itemsAdded(let added):
                let first = Int(added.firstIndex)
                retried?.formUnion(first..<(first + added.items.count))  // a re-run manifest's images
                if items.count < first + added.items.count {
                    let missing = first + added.items.count - items.count
                    items += (0..<missing).map { BatchItem(source: "item \(items.count + $0)") }
                    outcomes += Array(repeating: nil, count: missing)
                }
                for (offset, item) in added.items.enumerated() { items[first + offset] = item }
                expansions[Int(added.parentIndex), default: 0] += added.items.count
                progress(.grew(count: added.items.count, total: items.count))
            case .itemFinished(let finished):
                await record(finished)
            case .itemsFinished(let group):
                for finished in group { await record(finished) }
            case .finished:
                break
            }
        }
        let summarized = outcomes.enumerated().filter { retried?.contains($0.offset) ?? true }
        let summary = summarized.map { index, outcome in
            outcome
                ?? ItemOutcome(
                    index: index, source: items[index].source, outputPath: nil,
                    error: "no result arrived before the batch ended")
        }
        return BatchSummary(batchID: batchID, items: summary)
    }

    private func write(_ finished: ItemFinished, source: String, name: String, index: Int) async -> ItemOutcome {
        switch finished.outcome {
        case .failure(let failure):
            return ItemOutcome(
                index: index, source: source, outputPath: nil, error: failure.message,
                wasCancelled: failure.code == .cancelled)
        case .output(let output) where !output.location.isEmpty:
            // Written by the worker into the batch's sink: only its metadata came here.
            return ItemOutcome(index: index, source: source, outputPath: output.location, error: nil, inSink: true)
        case .output(let output):
            let format = ImageFormat(sniffing: output.data) ?? .jpeg
            let (directory, overwrite) = (outputDirectory, overwrite)
            do {
                let written = try await ComputeThreads.shared.run { _ in
                    // The name's folders, made below the output directory (a flat name has none).
                    let (folder, stem) = try OutputTree.prepare(name, under: directory)
                    return try OutputFile.write(
                        output.data, in: folder, stem: stem, fileExtension: format.fileExtension,
                        overwrite: overwrite)
                }
                return ItemOutcome(
                    index: index, source: source, outputPath: written.url.path, error: nil,
                    existingPath: written.existing?.path, warnings: output.warnings)
            } catch {
                return ItemOutcome(index: index, source: source, outputPath: nil, error: "\(error)")
            }
        }
    }
}
