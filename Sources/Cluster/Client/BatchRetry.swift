import Foundation
import Wire

/// Runs the failed and cancelled items of a finished batch again (or the items named) and writes their
/// outputs into a directory as they arrive, as `submit` does; the batch's succeeded items keep their
/// outputs and are not sent again. What `shiftwork retry BATCH --out DIR` runs.
public struct BatchRetry: Sendable {
    /// The batch's ID, as `submit` printed it.
    public let batchID: String
    /// The items to run again, each by its output name, its source or its index; empty: every failed or
    /// cancelled item.
    public let items: [String]
    /// Directory the outputs are written into (created if missing).
    public let outputDirectory: URL
    /// Whether outputs replace files of the same name in `outputDirectory` (else they take free names).
    public let overwrite: Bool
    /// Whether the outputs keep the folders their names hold (`.tree`, the default) or all go to the top of
    /// `outputDirectory` (`.flat`, `--flat`).
    public var layout: OutputLayout = .tree

    /// Describes a retry.
    public init(batchID: String, items: [String] = [], outputDirectory: URL, overwrite: Bool = false) {
        self.batchID = batchID
        self.items = items
        self.outputDirectory = outputDirectory
        self.overwrite = overwrite
    }

    /// Asks for the retry, writes the outputs, and returns once every re-run item is done. The summary
    /// lists the re-run items only (none when there was nothing to re-run).
    ///
    /// - Throws: `ClusterClientError` when the coordinator does not answer or refuses the retry (an unknown
    ///   batch, one still running, a name that is no item of it).
    public func run(
        with client: ClusterClient, progress: @Sendable (BatchProgress) -> Void = { _ in }
    ) async throws -> BatchSummary {
        // The sources, for the summary; the output names come with the results. A status refused (a batch
        // unknown, or another client's) leaves them out: the retry's own refusal says why.
        let status = try? await client.status(batchID: batchID)
        // Local files the batch was submitted with: re-run items need their bytes again (uploads).
        client.uploads.allow(ClientUploads.localSources(of: status?.batches.first { $0.batchID == batchID }))
        var collector = BatchOutputCollector(
            outputDirectory: outputDirectory, overwrite: overwrite,
            itemsOf: status?.batches.first { $0.batchID == batchID })
        collector.layout = layout
        return try await collector.collect(await client.retry(batchID: batchID, items: items), progress: progress)
    }
}
