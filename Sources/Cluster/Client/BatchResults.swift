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
    /// Whether the outputs keep the folders their names hold (`.tree`, the default) or all go to the top of
    /// `outputDirectory` (`.flat`, `--flat`).
    public var layout: OutputLayout = .tree

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
                "no batch \(batchID): it is unknown to this coordinator. `shiftwork status` lists the batches it knows."
            )
        }
        if let listed = Self.sinkListing(batch) {
            // The outputs are in the batch's sink, and every item is done: the status says where each went.
            progress(.accepted(batchID: batchID, itemCount: listed.count))
            for (done, outcome) in listed.enumerated() { progress(.item(outcome, done: done + 1, total: listed.count)) }
            return BatchSummary(batchID: batchID, items: listed)
        }
        // Local files still awaiting upload (their client went away) are sent by this one, on this machine.
        client.uploads.allow(ClientUploads.localSources(of: batch))
        var collector = BatchOutputCollector(outputDirectory: outputDirectory, overwrite: overwrite, itemsOf: batch)
        collector.layout = layout
        return try await collector.collect(await client.results(batchID: batchID), progress: progress)
    }

    /// The outcomes of a finished batch whose outputs went to a sink, from its status; `nil` for a batch
    /// without a sink or with items still running.
    static func sinkListing(_ batch: BatchStatus) -> [ItemOutcome]? {
        let finished = ["succeeded", "failed", "cancelled"]
        guard batch.items.count == Int(batch.itemCount), batch.items.contains(where: { !$0.location.isEmpty }),
            batch.items.allSatisfy({ finished.contains($0.state) })
        else { return nil }
        return batch.items.map { item in
            ItemOutcome(
                index: Int(item.itemIndex), source: item.source,
                outputPath: item.location.isEmpty ? nil : item.location,
                error: item.state == "succeeded" ? nil : (item.error.isEmpty ? item.state : item.error),
                wasCancelled: item.state == "cancelled", inSink: !item.location.isEmpty)
        }
    }
}
