import Foundation
import Fetching
import Imaging
import Wire

/// Turns a batch's event stream into output files in a directory and a summary: what `submit`, `run`
/// and `results` share.
///
/// Each item is written once, whatever the coordinator repeats (a client re-attaching after a
/// restart may be sent an item twice). File names come from the item's output name, made safe: a
/// name never leaves `outputDirectory`, and two items never share a file.
struct BatchOutputCollector {
    let outputDirectory: URL
    /// The items as the client knows them (source and output name); for a batch the client did not
    /// submit, the sources only, and the names come with the results.
    let items: [BatchItem]

    func collect(
        _ events: AsyncThrowingStream<BatchEvent, any Error>, progress: @Sendable (BatchProgress) -> Void
    ) async throws -> BatchSummary {
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        var items = self.items
        var outcomes: [ItemOutcome?] = Array(repeating: nil, count: items.count)
        var naming = OutputNaming()
        var batchID = ""
        var done = 0
        var expansions: [Int: Int] = [:]  // manifest item → images it added
        /// Writes one finished item's output (once) and reports it.
        func record(_ finished: ItemFinished) {
            let index = Int(finished.itemIndex)
            guard items.indices.contains(index), outcomes[index] == nil else { return }
            let outcome: ItemOutcome
            if case .output(let output) = finished.outcome, output.mediaType == Manifest.mediaType {
                outcome = ItemOutcome(index: index, source: items[index].source, outputPath: nil, error: nil,
                                      expandedInto: expansions[index] ?? 0)
            } else {
                let stem = naming.stem(forName: items[index].outputName.isEmpty ? finished.outputName : items[index].outputName)
                outcome = write(finished, source: items[index].source, stem: stem, index: index)
            }
            outcomes[index] = outcome
            done += 1
            progress(.item(outcome, done: done, total: items.count))
        }
        for try await event in events {
            switch event {
            case .accepted(let id, let count):
                batchID = id
                if items.count < count {
                    items += (items.count..<count).map { BatchItem(source: "item \($0)") }
                    outcomes += Array(repeating: nil, count: count - outcomes.count)
                }
                progress(.accepted(batchID: id, itemCount: count))
            case .itemsAdded(let added):
                let first = Int(added.firstIndex)
                if items.count < first + added.items.count {
                    let missing = first + added.items.count - items.count
                    items += (0..<missing).map { BatchItem(source: "item \(items.count + $0)") }
                    outcomes += Array(repeating: nil, count: missing)
                }
                for (offset, item) in added.items.enumerated() { items[first + offset] = item }
                expansions[Int(added.parentIndex), default: 0] += added.items.count
                progress(.grew(count: added.items.count, total: items.count))
            case .itemFinished(let finished):
                record(finished)
            case .itemsFinished(let group):
                for finished in group { record(finished) }
            case .finished:
                break
            }
        }
        let summary = outcomes.enumerated().map { index, outcome in
            outcome ?? ItemOutcome(index: index, source: items[index].source, outputPath: nil,
                                   error: "no result arrived before the batch ended")
        }
        return BatchSummary(batchID: batchID, items: summary)
    }

    private func write(_ finished: ItemFinished, source: String, stem: String, index: Int) -> ItemOutcome {
        switch finished.outcome {
        case .failure(let failure):
            return ItemOutcome(index: index, source: source, outputPath: nil, error: failure.message,
                               wasCancelled: failure.code == .cancelled)
        case .output(let output):
            let format = ImageFormat(sniffing: output.data) ?? .jpeg
            let url = outputDirectory.appendingPathComponent("\(stem).\(format.fileExtension)")
            do {
                try Data(output.data).write(to: url, options: .atomic)
                return ItemOutcome(index: index, source: source, outputPath: url.path, error: nil)
            } catch {
                return ItemOutcome(index: index, source: source, outputPath: nil,
                                   error: "could not write \(url.path): \(error.localizedDescription)")
            }
        }
    }
}
