import Foundation
import Wire

/// The coordinator's durable state under `--data-dir`: a journal of accepted batches, finished items
/// and cancellations (`journal`), and the output bytes of finished items (`results/BATCH/INDEX`).
///
/// Order of writes: an output's file is written before the record that says the item finished, and a
/// record is written before the client hears of it, so that whatever a client was told survives a
/// `kill -9` of the coordinator. Acceptances are synced to disk (nothing accepted is lost even when
/// the machine fails); item records are not (a machine failure may run the last items again).
///
/// One coordinator at a time: the directory is locked (`flock` on `DIR/lock`) while a journal is open.
///
/// Owned by the coordinator's actor; not for use from several threads.
final class Journal {
    /// The data directory.
    let directory: URL
    let file: JournalFile
    let resultsDirectory: URL
    private let lockDescriptor: Int32
    /// How far the journal goes (`JournalPosition.advanced(by:)`), for a pair of coordinators.
    var position: JournalPosition
    /// For the active coordinator of a pair: what was written since it was last taken (`takeWritten`),
    /// in order, for the stream to its peer; `nil` when nobody streams it.
    var written: [Written]?
    /// The records the file held once opened (compacted), for a pair's stream; taken once (`takeOpenedRecords`).
    private var openedRecords: [[UInt8]]?

    /// What was written to the journal, for a pair's stream.
    enum Written: Equatable {
        /// A record, decoded, and its frame as the file holds it (`JournalFraming`: framed once, for both).
        case record(JournalRecord, framed: [UInt8])
        /// A stored output (`results/BATCH/INDEX`), written before the record that names it.
        case resultFile(batchID: String, itemIndex: UInt32)
    }

    /// Opens (or creates) the journal in `directory`, replays it, compacts it (retired batches are
    /// dropped) and records this start.
    ///
    /// - Throws: `JournalFile.Failure` when the directory or the journal cannot be created, read or written.
    /// With `paired` (a coordinator of a pair), the compacted journal ends with what this coordinator last
    /// was (`pairHistory`) and where the journal stands (`pairPosition`), and the sender of its stream can
    /// take its records (`takeOpenedRecords`).
    static func open(directory: URL, coordinatorID: String, paired: Bool = false) throws -> (Journal, RecoveredState) {
        let results = directory.appendingPathComponent("results", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: results, withIntermediateDirectories: true)
        } catch {
            throw JournalFile.Failure(
                description:
                    "cannot create the data directory \(directory.path): \(error.localizedDescription). "
                    + "Give a writable directory with --data-dir.")
        }
        let lock = try Self.lock(directory)
        let opened: (JournalFile, records: [[UInt8]], discardedBytes: Int)
        do {
            opened = try JournalFile.open(directory.appendingPathComponent("journal"))
        } catch {
            Glibc.close(lock)
            throw error
        }
        let (file, records, discarded) = opened
        var state = RecoveredState(replaying: records, discardedBytes: discarded)
        let journal = Journal(
            directory: directory, file: file, resultsDirectory: results, lockDescriptor: lock, position: state.position)
        let started = JournalRecord.started(
            coordinatorID: coordinatorID, incarnation: state.incarnation, unixMilliseconds: Self.nowMilliseconds())
        var compacted = [started] + state.compactRecords
        if paired {
            if state.history != .none { compacted.append(.pairHistory(state.history.rawValue)) }
            compacted.append(.pairPosition(term: state.position.term, records: state.position.records))
        }
        let encoded = compacted.map(JournalCodec.encode)
        try file.rewrite(encoded)
        if paired { journal.openedRecords = encoded }
        journal.removeResults(except: Set(state.batches.map(\.batchID)))
        state.batches = state.batches.map(journal.droppingMissingOutputs)
        return (journal, state)
    }

    private init(
        directory: URL, file: JournalFile, resultsDirectory: URL, lockDescriptor: Int32, position: JournalPosition
    ) {
        self.position = position
        self.directory = directory
        self.file = file
        self.resultsDirectory = resultsDirectory
        self.lockDescriptor = lockDescriptor
    }

    deinit {
        Glibc.close(lockDescriptor)  // releases the lock
    }

    /// Takes the data directory's lock, or says which directory is in use.
    private static func lock(_ directory: URL) throws -> Int32 {
        let path = directory.appendingPathComponent("lock").path
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw JournalFile.Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(descriptor)
            throw JournalFile.Failure(
                description:
                    "another coordinator is using the data directory \(directory.path): stop it first, or give this one "
                    + "its own --data-dir")
        }
        return descriptor
    }

    /// Records an accepted batch and its owner (the submitter's public key in Z85, empty without CurveZMQ),
    /// synced to disk before it returns.
    func recordAccepted(batchID: String, client: [UInt8], submit: SubmitBatch, ownerKey: String = "") throws {
        try append(
            .batchAccepted(
                batchID: batchID, client: client, submit: submit, unixMilliseconds: Self.nowMilliseconds(),
                ownerKey: ownerKey), sync: true)
    }

    /// Records an item's final outcome; an output's bytes are written to the results directory first.
    func recordFinished(_ item: ItemFinished) throws {
        var record = item
        if case .output(var output) = item.outcome {
            if !output.data.isEmpty {
                let url = resultURL(batchID: item.batchID, itemIndex: item.itemIndex)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(output.data).write(to: url)
                written?.append(.resultFile(batchID: item.batchID, itemIndex: item.itemIndex))
            }
            output.data = []
            record.outcome = .output(output)
        }
        try appendBuffered(.itemFinished(record))
    }

    /// Records that a manifest added items to a batch (before the manifest item's own record).
    func recordItemsAdded(_ added: ItemsAdded) throws {
        try appendBuffered(.itemsAdded(added))
    }

    /// Records a failed attempt at one of an item's tasks (buffered, as finished items are).
    func recordAttemptFailed(batchID: String, itemIndex: UInt32, attempt: AttemptStatus) throws {
        try appendBuffered(.attemptFailed(batchID: batchID, itemIndex: itemIndex, attempt: attempt))
    }

    /// Records a cancellation request.
    func recordCancelled(_ cancel: CancelBatch) throws {
        try appendBuffered(.batchCancelled(cancel))
    }

    /// Records that a client re-ran items of a finished batch (synced, as an accepted batch is, before the
    /// client is told).
    func recordRetried(batchID: String, itemIndexes: [UInt32]) throws {
        try append(
            .batchRetried(batchID: batchID, itemIndexes: itemIndexes, unixMilliseconds: Self.nowMilliseconds()),
            sync: true)
    }

    /// Records that a batch is forgotten (written at once, before its results are removed), and removes
    /// its results.
    func recordRetired(batchID: String) throws {
        try append(.batchRetired(batchID: batchID), sync: false)
        try? FileManager.default.removeItem(at: batchResults(batchID))
    }

    /// Records what this coordinator of a pair now is (synced: a restart decides by it).
    func recordPairHistory(_ history: PairHistory) throws {
        try append(.pairHistory(history.rawValue), sync: true)
    }

    /// Records a takeover's new term (synced, before anything is served in it).
    func recordPairTerm(_ term: UInt64) throws {
        try append(.pairTerm(term), sync: true)
    }

    /// Appends one record (after any buffered ones), written at once; with `sync`, on stable storage.
    private func append(_ record: JournalRecord, sync: Bool) throws {
        let framed = try JournalFile.frame(JournalCodec.encode(record))
        try file.append(framed: framed, sync: sync)
        wrote(record, framed)
    }

    /// Buffers one record, written by the next `flush()`.
    private func appendBuffered(_ record: JournalRecord) throws {
        let framed = try JournalFile.frame(JournalCodec.encode(record))
        file.appendBuffered(framed: framed)
        wrote(record, framed)
    }

    private func wrote(_ record: JournalRecord, _ framed: [UInt8]) {
        position = position.advanced(by: record)
        written?.append(.record(record, framed: framed))
    }

    /// Every record the journal file holds, read from the disk (buffered records written first): a pair's
    /// snapshot for a peer behind what its sender keeps in memory. `nil` when the file cannot be read.
    func readRecords() -> [[UInt8]]? {
        do {
            try flush()
            return JournalFile.records(in: try Data(contentsOf: file.url, options: .alwaysMapped)).0
        } catch {
            return nil
        }
    }

    /// What was written since the last call, for the stream to the peer.
    func takeWritten() -> [Written] {
        defer { if written != nil { written = [] } }
        return written ?? []
    }

    /// The records the file held once opened and compacted (once; `nil` afterwards, or when not paired).
    func takeOpenedRecords() -> [[UInt8]]? {
        defer { openedRecords = nil }
        return openedRecords
    }

    /// Writes the buffered records (finished items, expansions, cancellations)
    /// with one `write(2)`. The coordinator calls it before it sends anything, so that what a client is
    /// told is in the journal first.
    func flush() throws {
        try file.flush()
    }

    /// The stored output bytes of a finished item (empty for outputs without bytes, e.g. no-op tasks).
    func storedOutput(batchID: String, itemIndex: UInt32) throws -> [UInt8] {
        let url = resultURL(batchID: batchID, itemIndex: itemIndex)
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return [UInt8](try Data(contentsOf: url))
    }

    /// Whether the output of a finished item is stored.
    private func hasStoredOutput(batchID: String, itemIndex: UInt32) -> Bool {
        FileManager.default.fileExists(atPath: resultURL(batchID: batchID, itemIndex: itemIndex).path)
    }

    /// `results/BATCH`: a batch's stored outputs.
    private func batchResults(_ batchID: String) -> URL {
        resultsDirectory.appendingPathComponent(batchID, isDirectory: true)
    }

    /// `results/BATCH/INDEX`: where a finished item's output is stored.
    func resultURL(batchID: String, itemIndex: UInt32) -> URL {
        batchResults(batchID).appendingPathComponent(String(itemIndex))
    }

    /// A recovered batch without the successes whose output file is missing (removed by hand, or lost
    /// with a machine failure): those items run again.
    private func droppingMissingOutputs(_ batch: RecoveredBatch) -> RecoveredBatch {
        var batch = batch
        for (index, item) in batch.finished {
            // No-op outputs and expanded manifests have no bytes.
            guard case .output(let output) = item.outcome, !output.mediaType.isEmpty,
                output.mediaType != ManifestList.mediaType
            else { continue }
            if !hasStoredOutput(batchID: batch.batchID, itemIndex: UInt32(index)) {
                batch.finished[index] = nil
            }
        }
        return batch
    }

    /// Removes result directories of batches the journal no longer holds.
    private func removeResults(except live: Set<String>) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: resultsDirectory.path)) ?? []
        for entry in entries where !live.contains(entry) {
            try? FileManager.default.removeItem(at: resultsDirectory.appendingPathComponent(entry))
        }
    }

    /// The wall clock in milliseconds since 1970, as records hold it.
    static func nowMilliseconds() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}
