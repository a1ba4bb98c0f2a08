import Foundation
import Wire

/// The passive coordinator of a pair keeps its journal from the active one's stream: records appended as
/// they come (the same file format, so a restart replays them), a snapshot replacing the whole journal,
/// result files written before the records that name them.
extension Journal {
    /// Appends records the active coordinator wrote, in the journal's framing as they came (checked by
    /// `ReplicationReceiver`: every frame's CRC-32, the records' count and where they reach), with one
    /// `write(2)`; with `sync`, on stable storage (`fdatasync`) before it returns. The journal then holds
    /// `reaches`.
    /// A failed sync throws with the records written (the position follows them: they are not written twice).
    func appendReplicated(frames: [UInt8], reaches: JournalPosition, sync: Bool) throws {
        try file.append(framed: frames, sync: false)
        position = reaches
        if sync { try file.sync() }
    }

    /// Replaces the journal with a snapshot of the active one's, keeping what this coordinator is
    /// (`history`); atomically, as a compaction.
    func replace(with records: [[UInt8]], history: PairHistory) throws {
        var replaced = records.filter { bytes in
            guard let record = try? JournalCodec.decode(bytes) else { return false }
            return record.isReplicated
        }
        if history != .none { replaced.append(JournalCodec.encode(.pairHistory(history.rawValue))) }
        try file.rewrite(replaced)
        position = replaced.reduce(JournalPosition.empty) { position, bytes in
            (try? JournalCodec.decode(bytes)).map { position.advanced(by: $0) } ?? position
        }
    }

    /// Writes a stored output the active coordinator sent (`results/BATCH/INDEX`, checked by
    /// `ReplicationReceiver.problem(with:)`).
    func writeReplicatedResult(batchID: String, itemIndex: UInt32, data: [UInt8]) throws {
        let url = resultURL(batchID: batchID, itemIndex: itemIndex)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(data).write(to: url)
    }

    /// Every stored output, as (batch, item index), for a snapshot.
    func storedResultFiles() -> [(batchID: String, itemIndex: UInt32)] {
        let manager = FileManager.default
        var files: [(String, UInt32)] = []
        for batch in (try? manager.contentsOfDirectory(atPath: resultsDirectory.path))?.sorted() ?? [] {
            let names =
                (try? manager.contentsOfDirectory(atPath: resultsDirectory.appendingPathComponent(batch).path)) ?? []
            files += names.compactMap { UInt32($0) }.sorted().map { (batch, $0) }
        }
        return files
    }
}
