import Wire

/// The active coordinator's side of the journal stream, free of I/O: what its journal holds (every record
/// since the journal was opened, the compacted ones first), how far the peer holds it, and what to send
/// next. The actor feeds it the records it writes (`append`) and the peer's answers (`peerHolds`), and
/// sends the `Output`s it returns, in order.
///
/// - **Live tail.** A peer that holds a point of this journal (the position after the compaction's
///   `pairPosition` record, or after any record written since) is sent the records after it.
/// - **Catch-up from the compaction.** A peer at any other point (behind the compaction, on another
///   history, or empty) is sent a snapshot: `snapshotStart` (the actor sends every stored result first),
///   the whole journal, `snapshotEnd`; it replaces its journal with it.
/// - **Never over newer data.** A peer that holds more than this journal is sent nothing: the pair's rules
///   (`CoordinatorPair`) say who leads, and the operator is told.
/// - **Result files before records.** A stored output (`appendResultFile`) goes before the record that
///   names it, as it is written before it locally.
struct ReplicationSender {
    /// One entry of the journal as the peer is sent it.
    enum Entry: Equatable {
        /// A record's bytes and the position after it; `resumable`: a peer that holds exactly that position
        /// may be sent what follows (false for the compacted records, whose positions are not the original's).
        case record([UInt8], after: JournalPosition, resumable: Bool)
        /// A stored output, sent (read from the results directory) before the record that names it.
        case resultFile(batchID: String, itemIndex: UInt32)
    }

    /// What the actor sends the peer, in order.
    enum Output: Equatable {
        /// A snapshot starts: send `PairSnapshot{end: false}`, then every stored result file.
        case snapshotStart
        /// Send this stored result file (`PairResultFile`).
        case resultFile(batchID: String, itemIndex: UInt32)
        /// Send these records (`PairJournal`): `frames` in the journal's framing; `snapshot`: part of one.
        case frames(from: JournalPosition, reaches: JournalPosition, frames: [UInt8], count: Int, snapshot: Bool)
        /// The snapshot is complete (`PairSnapshot{end: true, reaches}`).
        case snapshotEnd(reaches: JournalPosition)
    }

    /// Records per `PairJournal`, at most.
    static let maxRecordsPerMessage = 1_000
    /// Framed bytes per `PairJournal`, about (one record larger than this goes alone).
    static let maxBytesPerMessage = 8 << 20

    private(set) var entries: [Entry] = []
    /// How far this journal goes.
    private(set) var written: JournalPosition = .empty
    /// The next entry to send, while a peer is streamed to (`nil`: no peer yet, or it was lost).
    private var next: Int?
    /// How far the peer said it holds (`nil`: not heard since the start or since it was lost).
    private(set) var peerHeld: JournalPosition?

    /// A sender for the journal that holds `records` (as the file holds them once opened and compacted).
    init(records: [[UInt8]]) {
        let decoded = records.map { try? JournalCodec.decode($0) }
        // Points after the last `pairPosition` (the compaction's) are the original's; before it, not.
        let checkpoint = decoded.lastIndex { if case .pairPosition = $0 { true } else { false } }
        for (index, (bytes, record)) in zip(records, decoded).enumerated() {
            guard let record, record.isReplicated else { continue }
            written = written.advanced(by: record)
            entries.append(.record(bytes, after: written, resumable: checkpoint.map { index >= $0 } ?? false))
        }
    }

    /// Whether a peer is streamed to (its position is known and the stream follows on from it).
    var isStreaming: Bool { next != nil }

    /// Whether the peer holds everything written: the pair's `peerCaughtUp`.
    var peerCaughtUp: Bool { peerHeld == written && next != nil }

    /// Records written that the peer does not hold yet (0 when no peer is known).
    var lagRecords: UInt64 {
        guard let peerHeld else { return 0 }
        return written.records - min(written.records, peerHeld.records)
    }

    /// A record just written to this journal (`bytes` its encoding). Returns what to send now.
    mutating func append(_ record: JournalRecord, bytes: [UInt8]) -> [Output] {
        guard record.isReplicated else { return [] }
        written = written.advanced(by: record)
        entries.append(.record(bytes, after: written, resumable: true))
        return pending()
    }

    /// A stored output just written (before its record). Returns what to send now.
    mutating func appendResultFile(batchID: String, itemIndex: UInt32) -> [Output] {
        entries.append(.resultFile(batchID: batchID, itemIndex: itemIndex))
        return pending()
    }

    /// The peer holds `held` (its `PairHeld`, or its announcement as a passive or starting coordinator);
    /// with `gap`, what was sent after it was lost. Returns what to send now: the rest of the stream, or a
    /// snapshot when `held` is no point of this journal.
    mutating func peerHolds(_ held: JournalPosition, gap: Bool = false) -> [Output] {
        peerHeld = gap ? held : max(held, peerHeld ?? held)
        if let next, !gap { return next < entries.count ? pending() : [] }
        guard held <= written else {
            next = nil  // the peer holds more: never overwritten from here; the pair's rules decide
            return []
        }
        if let resume = resumePoint(after: held) {
            next = resume
            return pending()
        }
        return snapshot()
    }

    /// The link to the peer broke, or it restarted: the stream starts again from what it says it holds.
    mutating func peerLost() {
        next = nil
        peerHeld = nil
    }

    /// The index after the last resumable record at `held`; 0 for an empty journal at `.empty`.
    private func resumePoint(after held: JournalPosition) -> Int? {
        if held == .empty, !entries.contains(where: { if case .record = $0 { true } else { false } }) {
            return 0
        }
        for index in entries.indices.reversed() {
            if case .record(_, let after, let resumable) = entries[index], after == held {
                return resumable ? index + 1 : nil
            }
        }
        return nil
    }

    /// The whole journal (result files are sent from the results directory at its start).
    private mutating func snapshot() -> [Output] {
        var out: [Output] = [.snapshotStart]
        out += frames(of: entries.indices, from: .empty, withFiles: false)
        out.append(.snapshotEnd(reaches: written))
        next = entries.count
        return out
    }

    /// The entries not sent yet.
    private mutating func pending() -> [Output] {
        guard let start = next, start < entries.count else { return [] }
        next = entries.count
        return frames(of: start..<entries.count, from: position(before: start), withFiles: true)
    }

    /// The position before entry `index`.
    private func position(before index: Int) -> JournalPosition {
        for earlier in entries[..<index].reversed() {
            if case .record(_, let after, _) = earlier { return after }
        }
        return .empty
    }

    /// `range`'s records in messages of at most `maxRecordsPerMessage` and about `maxBytesPerMessage`, and
    /// (with `withFiles`) its result files in between, in order.
    private func frames(of range: Range<Int>, from start: JournalPosition, withFiles: Bool) -> [Output] {
        var out: [Output] = []
        var from = start
        var reaches = start
        var bytes: [UInt8] = []
        var count = 0
        func close() {
            guard count > 0 else { return }
            out.append(.frames(from: from, reaches: reaches, frames: bytes, count: count, snapshot: !withFiles))
            from = reaches
            bytes = []
            count = 0
        }
        for index in range {
            switch entries[index] {
            case .resultFile(let batchID, let itemIndex):
                guard withFiles else { continue }
                close()
                out.append(.resultFile(batchID: batchID, itemIndex: itemIndex))
            case .record(let record, let after, _):
                bytes += JournalFraming.frame(record)
                count += 1
                reaches = after
                if count >= Self.maxRecordsPerMessage || bytes.count >= Self.maxBytesPerMessage { close() }
            }
        }
        close()
        return out
    }
}
