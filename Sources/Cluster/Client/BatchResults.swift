import Foundation
import Wire

/// Attaches to a batch the coordinator already has (submitted by another process, or before a
/// restart) and writes its outputs into a directory: every item finished so far at once, the others as
/// they finish. What `shiftwork results BATCH --out DIR` runs.
public struct BatchResults: Sendable {
    /// The batch's ID, as `submit` printed it.
    public let batchID: String
    /// Directory the outputs are written into (created if missing).
    public let outputDirectory: URL
    /// Whether outputs replace files of the same name in `outputDirectory` (else they take free names).
    public let overwrite: Bool

    /// Describes a re-attachment.
    public init(batchID: String, outputDirectory: URL, overwrite: Bool = false) {
        self.overwrite = overwrite
        self.batchID = batchID
        self.outputDirectory = outputDirectory
    }

    /// Attaches, writes the outputs, and returns once every item is done.
    ///
    /// - Throws: `ClusterClientError` when the coordinator does not answer or does not know the batch
    ///   (or keeps no results: it runs without `--data-dir`).
    public func run(
        with client: ClusterClient, progress: @Sendable (BatchProgress) -> Void = { _ in }
    ) async throws -> BatchSummary {
        // The sources, for the summary; the output names come with the results.
        let status = try await client.status(batchID: batchID)
        guard let batch = status.batches.first(where: { $0.batchID == batchID }) else {
            throw ClusterClientError.refused(
                "no batch \(batchID): it is unknown to this coordinator. `shiftwork status` lists the batches it knows.")
        }
        var items = Array(repeating: BatchItem(source: ""), count: Int(batch.itemCount))
        for item in batch.items where Int(item.itemIndex) < items.count {
            items[Int(item.itemIndex)] = BatchItem(source: item.source)
        }
        let collector = BatchOutputCollector(outputDirectory: outputDirectory, overwrite: overwrite, items: items)
        return try await collector.collect(await client.results(batchID: batchID), progress: progress)
    }
}
