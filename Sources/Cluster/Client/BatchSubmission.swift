import Foundation
import Imaging
import Wire

/// The outcome of one item of a finished batch, as the client saw it.
public struct ItemOutcome: Sendable {
    /// Position of the item in the batch.
    public let index: Int
    /// The input URL or path.
    public let source: String
    /// Where the output image was written; `nil` when the item failed.
    public let outputPath: String?
    /// Why the item failed; `nil` when it succeeded.
    public let error: String?
    /// For a manifest, how many images it added to the batch (it has no output of its own); else 0.
    public let expandedInto: Int
    /// The item did not succeed because it was cancelled (by a client's request), not because it failed.
    public let wasCancelled: Bool
    /// The path the output would have had, when a file was already there: the output went to
    /// `outputPath` instead (nothing is overwritten without `--overwrite`).
    public let existingPath: String?
    /// What the worker warned about although the item succeeded (an ignored colour profile…).
    public let warnings: [String]
    /// `outputPath` is where a worker wrote the output in the batch's sink (a path or an `s3://` URL),
    /// not a file this client wrote.
    public let inSink: Bool

    /// Describes an item's outcome.
    public init(
        index: Int, source: String, outputPath: String?, error: String?, expandedInto: Int = 0,
        wasCancelled: Bool = false, existingPath: String? = nil, warnings: [String] = [], inSink: Bool = false
    ) {
        self.warnings = warnings
        self.inSink = inSink
        self.existingPath = existingPath
        self.index = index
        self.source = source
        self.outputPath = outputPath
        self.error = error
        self.expandedInto = expandedInto
        self.wasCancelled = wasCancelled
    }
}

/// What `BatchSubmission.run` reports as items finish.
public enum BatchProgress: Sendable {
    /// The coordinator accepted the batch.
    case accepted(batchID: String, itemCount: Int)
    /// Instead of `accepted`: the idempotency key named a batch the coordinator had; the client attached to it.
    case attached(batchID: String, itemCount: Int)
    /// Instead of `accepted`, for a retry: `itemCount` items of the batch's `batchItemCount` run again (0:
    /// nothing to re-run).
    case retrying(batchID: String, itemCount: Int, batchItemCount: Int)
    /// One item finished (written, or failed).
    case item(ItemOutcome, done: Int, total: Int)
    /// A manifest added `count` items to the batch, which now has `total`.
    case grew(count: Int, total: Int)
}

/// The summary of a batch once every item finished.
public struct BatchSummary: Sendable {
    /// The coordinator's ID of the batch.
    public let batchID: String
    /// Every item's outcome, in input order.
    public let items: [ItemOutcome]
    /// Items whose output was written.
    public var succeeded: Int { items.filter { $0.error == nil }.count }
    /// Items that failed (not counting those cancelled).
    public var failed: Int { items.filter { $0.error != nil && !$0.wasCancelled }.count }
    /// Items that were cancelled.
    public var cancelled: Int { items.filter(\.wasCancelled).count }
    /// Whether every item succeeded.
    public var allSucceeded: Bool { succeeded == items.count }
    /// Images processed: items whose output image was written (not failed or cancelled items, nor
    /// manifests, which list images and have no output of their own).
    public var imagesWritten: Int { items.filter { $0.outputPath != nil }.count }
    /// Items written under another name because a file of theirs was already in the output directory.
    public var renamed: Int { items.filter { $0.existingPath != nil }.count }
}

/// Submits a batch of inputs through a `ClusterClient` and writes each output image into a directory
/// as it arrives. Shared by `shiftwork submit` (a remote coordinator) and `shiftwork run` (embedded).
public struct BatchSubmission: Sendable {
    /// Input URLs (`http`, `https`, `file`) or paths.
    public let inputs: [String]
    /// Directory the outputs are written into (created if missing).
    public let outputDirectory: URL
    /// Filter settings.
    public let parameters: TiltShiftParameters
    /// Output format and quality.
    public let encoding: EncodingOptions
    /// Whether outputs replace files of the same name in `outputDirectory` (else they take free names).
    public let overwrite: Bool
    /// Where the workers write the outputs themselves (a directory they all reach, or
    /// `s3://BUCKET/PREFIX`): the client then gets their locations, not their bytes. Empty: `outputDirectory`.
    public var sink: String = ""
    /// The S3-compatible endpoint for `s3://` sinks and sources (empty: AWS).
    public var s3Endpoint: String = ""
    /// Retries of each task after a transient failure (0...10); `nil`: the coordinator's default (2).
    public var retries: Int?
    /// Seconds after which the coordinator cancels the batch's unfinished items; 0: no deadline.
    public var deadlineSeconds: Int = 0
    /// The batch's priority (`BatchPriority`, -10...10; checked by `SharingOptions` and the coordinator).
    public var priority: Int32 = BatchPriority.normal
    /// The idempotency key (`IdempotencyKey`); empty: none.
    public var idempotencyKey = ""
    /// For each input that came from a directory input, its path inside that directory
    /// (`2024/01/IMG_0001.HEIC`), so that the outputs keep the library's folders; `nil` (or missing) for an
    /// input given by itself.
    public var pathsInDirectories: [String?] = []
    /// Whether the outputs keep those folders (`.tree`, the default) or all go to the top (`.flat`, `--flat`).
    public var layout: OutputLayout = .tree
    /// Whether local inputs (paths, `file://` URLs) are uploaded: their bytes sent when the coordinator asks
    /// (`shiftwork submit`, docs/protocol.md "Uploads"). `false`: their paths are sent, for workers that
    /// read a disk they share with this client (`--shared-disk`), or an embedded run that reads them itself.
    public var uploadsLocalFiles = false

    /// Describes a submission.
    public init(
        inputs: [String], outputDirectory: URL, parameters: TiltShiftParameters = .coreImage,
        encoding: EncodingOptions = EncodingOptions(), overwrite: Bool = false
    ) {
        self.overwrite = overwrite
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.parameters = parameters
        self.encoding = encoding
    }

    /// Submits, writes outputs as they arrive, and returns once every item is done.
    ///
    /// - Throws: `ClusterClientError` when the coordinator does not answer or refuses the batch; a file
    ///   system error when the output directory cannot be created.
    public func run(
        with client: ClusterClient, progress: @Sendable (BatchProgress) -> Void = { _ in }
    ) async throws -> BatchSummary {
        if sink.isEmpty {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        }
        let (request, unreadable) = try self.request()
        client.uploads.allow(request.items.lazy.filter { $0.upload != nil }.map(\.source))
        client.uploads.allowUnreadable(unreadable)
        var collector = BatchOutputCollector(
            outputDirectory: outputDirectory, overwrite: overwrite, items: request.items)
        collector.writesFiles = sink.isEmpty
        collector.layout = layout
        return try await collector.collect(await client.submit(request), progress: progress)
    }

    /// Submits and returns as soon as the coordinator has accepted the batch (it holds everything it needs,
    /// in its journal when it runs with `--data-dir`), without waiting for any item: `submit --detach`.
    /// `status`, `results` and `retry` take the batch up later by its ID.
    ///
    /// - Returns: the batch's ID and item count, and whether the submission attached to a batch the
    ///   coordinator had (`--key`).
    /// - Throws: `ClusterClientError` when the coordinator does not answer or refuses the batch.
    public func detach(with client: ClusterClient) async throws -> (batchID: String, itemCount: Int, attached: Bool) {
        let (request, unreadable) = try self.request()
        let uploads = request.items.filter { $0.upload != nil }.map(\.source)
        client.uploads.allow(uploads)
        client.uploads.allowUnreadable(unreadable)
        for try await event in await client.submit(request) {
            let accepted: (batchID: String, itemCount: Int, attached: Bool)
            switch event {
            case .accepted(let id, let count): accepted = (id, count, false)
            case .attached(let id, let count): accepted = (id, count, true)
            default: continue
            }
            // Local files: the coordinator must hold their bytes on its disk before this client may leave.
            if !uploads.isEmpty, !(await client.uploads.waitUntilKept(accepted.batchID)) {
                _ = try? await client.cancel(batchID: accepted.batchID)
                throw ClusterClientError.refused(
                    "--detach with local files needs a coordinator that keeps uploads on disk, and this one keeps them in memory only (it runs without --data-dir); batch \(accepted.batchID) was cancelled: run submit without --detach, or start the coordinator with --data-dir"
                )
            }
            return accepted
        }
        throw ClusterClientError.refused("the coordinator ended the submission before accepting it")
    }

    /// The `SubmitBatch` this submission sends: its items named in input order (`OutputNaming.names`); with
    /// `uploadsLocalFiles`, a local file's item announces it (`BatchItem.upload`, its absolute path as source).
    ///
    /// A local file that cannot be read (gone, unreadable, not a regular file) is announced all the same
    /// (`LocalUpload.unreadable`) and returned with why: its item fails naming it, the rest goes on.
    ///
    /// - Throws: `ClusterClientError.refused` naming a local file the workers could not take (empty, over
    ///   the upload limit): nothing is sent.
    func request() throws -> (SubmitBatch, unreadable: [String: String]) {
        let names = OutputNaming.names(for: inputs, pathsInDirectories: pathsInDirectories, layout: layout)
        var items = zip(inputs, names).map { BatchItem(source: $0, outputName: $1) }
        var unreadable: [String: String] = [:]
        if uploadsLocalFiles {
            for index in items.indices {
                guard let path = LocalUpload.path(of: items[index].source) else { continue }
                do throws(LocalUpload.Refusal) {
                    items[index].upload = try LocalUpload.announce(path)
                } catch  where error.failsItemOnly {
                    items[index].upload = LocalUpload.unreadable
                    unreadable[path] = error.description
                } catch {
                    throw ClusterClientError.refused("\(error)")
                }
                items[index].source = path
            }
        }
        var request = SubmitBatch(
            requestID: UUID().uuidString, items: items,
            parameters: WireTiltShiftParameters(parameters, encoding: encoding),
            retries: retries.map { UInt32(clamping: $0) }, deadlineSeconds: UInt32(clamping: deadlineSeconds))
        request.priority = priority
        request.idempotencyKey = idempotencyKey
        request.sink = sink
        request.s3Endpoint = s3Endpoint
        return (request, unreadable)
    }
}
