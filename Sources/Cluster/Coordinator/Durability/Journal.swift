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
    private let file: JournalFile
    private let resultsDirectory: URL
    private let lockDescriptor: Int32

    /// Opens (or creates) the journal in `directory`, replays it, compacts it (retired batches are
    /// dropped) and records this start.
    ///
    /// - Throws: `JournalFile.Failure` when the directory or the journal cannot be created, read or written.
    static func open(directory: URL, coordinatorID: String) throws -> (Journal, RecoveredState) {
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
        let journal = Journal(directory: directory, file: file, resultsDirectory: results, lockDescriptor: lock)
        let started = JournalRecord.started(
            coordinatorID: coordinatorID, incarnation: state.incarnation, unixMilliseconds: Self.nowMilliseconds())
        try file.rewrite(([started] + state.compactRecords).map(JournalCodec.encode))
        journal.removeResults(except: Set(state.batches.map(\.batchID)))
        state.batches = state.batches.map(journal.droppingMissingOutputs)
        return (journal, state)
    }

    private init(directory: URL, file: JournalFile, resultsDirectory: URL, lockDescriptor: Int32) {
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
        try file.append(
            JournalCodec.encode(
                .batchAccepted(
                    batchID: batchID, client: client, submit: submit, unixMilliseconds: Self.nowMilliseconds(),
                    ownerKey: ownerKey)), sync: true)
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
            }
            output.data = []
            record.outcome = .output(output)
        }
        try file.appendBuffered(JournalCodec.encode(.itemFinished(record)))
    }

    /// Records that a manifest added items to a batch (before the manifest item's own record).
    func recordItemsAdded(_ added: ItemsAdded) throws {
        try file.appendBuffered(JournalCodec.encode(.itemsAdded(added)))
    }

    /// Records a failed attempt at one of an item's tasks (buffered, as finished items are).
    func recordAttemptFailed(batchID: String, itemIndex: UInt32, attempt: AttemptStatus) throws {
        try file.appendBuffered(
            JournalCodec.encode(.attemptFailed(batchID: batchID, itemIndex: itemIndex, attempt: attempt)))
    }

    /// Records a cancellation request.
    func recordCancelled(_ cancel: CancelBatch) throws {
        try file.appendBuffered(JournalCodec.encode(.batchCancelled(cancel)))
    }

    /// Records that a client re-ran items of a finished batch (synced, as an accepted batch is, before the
    /// client is told).
    func recordRetried(batchID: String, itemIndexes: [UInt32]) throws {
        try file.append(
            JournalCodec.encode(
                .batchRetried(
                    batchID: batchID, itemIndexes: itemIndexes,
                    unixMilliseconds: Self.nowMilliseconds())), sync: true)
    }

    /// Records that a batch is forgotten (written at once, before its results are removed), and removes
    /// its results.
    func recordRetired(batchID: String) throws {
        try file.append(JournalCodec.encode(.batchRetired(batchID: batchID)), sync: false)
        try? FileManager.default.removeItem(at: batchResults(batchID))
    }

    /// Writes the records buffered since the last write (finished items, expansions, cancellations)
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
