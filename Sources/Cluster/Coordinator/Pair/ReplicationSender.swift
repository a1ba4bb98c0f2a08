import Wire

/// The active coordinator's side of the journal stream, free of I/O: how far its journal goes, the tail of
/// it kept in memory, how far the peer holds it, and what to send next. The actor feeds it the records it
/// writes (`append`, in the journal's own frames) and the peer's answers (`peerHolds`), and sends the
/// `Output`s it returns, in order.
///
/// - **Live tail.** A peer that holds a point of this journal that is still in memory (the position after
///   the compaction's `pairPosition` record, or after any record written since) is sent the records after it.
/// - **Catch-up from the file.** A peer at any other point (behind what is kept, behind the compaction, on
///   another history, or empty) is sent a snapshot read from the journal file: `snapshotStart` (the actor
///   sends every stored result first), the whole journal, `snapshotEnd`; it replaces its journal with it.
/// - **Memory.** Kept in memory: what the peer does not hold yet (up to `maxKeptBytes` of frames), and the
///   last `keptHeldRecords` records it holds (for a peer that reconnects a little behind); the rest is in
///   the journal file, which the snapshot reads.
/// - **Never over newer data.** A peer that holds more than this journal is sent nothing: the pair's rules
///   (`CoordinatorPair`) say who leads, and the operator is told.
/// - **Result files before records.** A stored output (`Journal.Written.resultFile`) goes before the record that
///   names it, as it is written before it locally.
struct ReplicationSender {
    /// One entry of the journal as the peer is sent it.
    enum Entry: Equatable {
        /// A record's frame (`JournalFraming`) and the position after it; `resumable`: a peer that holds
        /// exactly that position may be sent what follows (false for the compacted records, whose positions
        /// are not the original's).
        case record(framed: [UInt8], after: JournalPosition, resumable: Bool)
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
    /// Records the peer holds that stay in memory, at most: a peer that reconnects within them resumes.
    static let keptHeldRecords = 4_096
    /// Frames kept in memory, about, by default: past it the oldest go, held or not (the peer then gets a
    /// snapshot).
    static let maxKeptBytes = 32 << 20
    private let maxKeptBytes: Int

    /// The tail of the journal in memory: `window[start...]`.
    private var window: [Entry] = []
    private var start = 0
    /// Records and frame bytes in the tail kept.
    private(set) var keptRecords = 0
    private(set) var keptBytes = 0
    /// The position before the tail kept (after the last record let go), and whether a peer that holds
    /// exactly it may be sent the tail.
    private var base: JournalPosition = .empty
    private var baseResumable = true
    /// How far this journal goes.
    private(set) var written: JournalPosition = .empty
    /// The next entry to send, while a peer is streamed to (`nil`: no peer yet, or it was lost).
    private var next: Int?
    /// How far the peer said it holds (`nil`: not heard since the start or since it was lost).
    private(set) var peerHeld: JournalPosition?
    /// Why the last `peerHolds` could not send the snapshot it needed, for the log (`nil`: it could, or
    /// needed none).
    private(set) var snapshotProblem: String?

    /// A sender for the journal that holds `records` (as the file holds them once opened and compacted):
    /// the records from its compaction's `pairPosition` on are kept (a peer at that point resumes); those
    /// before are read from the file for a snapshot.
    init(records: [[UInt8]], maxKeptBytes: Int = Self.maxKeptBytes) {
        self.maxKeptBytes = maxKeptBytes
        let kinds = records.map(JournalRecordKind.of)
        let checkpoint = kinds.lastIndex(of: .pairPosition)
        for (index, (bytes, kind)) in zip(records, kinds).enumerated() {
            guard let kind, kind != .pairHistory, let after = Self.position(after: bytes, kind: kind, from: written)
            else { continue }
            written = after
            if let checkpoint, index >= checkpoint {
                keep(.record(framed: JournalFraming.frame(bytes), after: after, resumable: true))
            } else {
                base = after
                baseResumable = false
            }
        }
    }

    /// Entries kept in memory.
    var keptEntries: Int { window.count - start }

    /// Whether a peer is streamed to (its position is known and the stream follows on from it).
    var isStreaming: Bool { next != nil }

    /// Whether the peer holds everything written: the pair's `peerCaughtUp`.
    var peerCaughtUp: Bool { peerHeld == written && next != nil }

    /// Records written that the peer does not hold yet (0 when no peer is known).
    var lagRecords: UInt64 {
        guard let peerHeld else { return 0 }
        return written.records - min(written.records, peerHeld.records)
    }

    /// What the journal wrote since last time (records with their frames as the file holds them, stored
    /// outputs before the records that name them), in order. Returns what to send now: a burst goes in as
    /// few `PairJournal`s as `maxRecordsPerMessage` and `maxBytesPerMessage` allow.
    mutating func append(contentsOf written: [Journal.Written]) -> [Output] {
        for item in written {
            switch item {
            case .record(let record, let framed):
                guard record.isReplicated else { continue }
                self.written = self.written.advanced(by: record)
                keep(.record(framed: framed, after: self.written, resumable: true))
            case .resultFile(let batchID, let itemIndex):
                keep(.resultFile(batchID: batchID, itemIndex: itemIndex))
            }
        }
        defer { trim() }
        return pending()
    }

    /// A record just written to this journal (`framed`: its frame, as the file holds it). Returns what to
    /// send now.
    mutating func append(_ record: JournalRecord, framed: [UInt8]) -> [Output] {
        append(contentsOf: [.record(record, framed: framed)])
    }

    /// The peer holds `held` (its `PairHeld`, or its announcement as a passive or starting coordinator);
    /// with `gap`, what was sent after it was lost. Returns what to send now: the rest of the stream, or a
    /// snapshot when `held` is no point of what is kept. `journal` reads the journal file's records (all of
    /// them, as `JournalFile` frames them; `nil` when it cannot be read), for a snapshot only.
    mutating func peerHolds(
        _ held: JournalPosition, gap: Bool = false, journal: () -> [[UInt8]]?
    ) -> [Output] {
        peerHeld = gap ? held : max(held, peerHeld ?? held)
        snapshotProblem = nil
        defer { trim() }
        if let next, !gap { return next < window.count ? pending() : [] }
        guard held <= written else {
            next = nil  // the peer holds more: never overwritten from here; the pair's rules decide
            return []
        }
        if let resume = resumePoint(after: held) {
            next = resume
            return pending()
        }
        return snapshot(of: journal())
    }

    /// The link to the peer broke, or it restarted: the stream starts again from what it says it holds.
    mutating func peerLost() {
        next = nil
        peerHeld = nil
    }

    /// The position after a record of `kind` whose bytes are `bytes`, from `position` (`nil`: a record that
    /// sets the position and does not decode).
    private static func position(
        after bytes: [UInt8], kind: JournalRecordKind, from position: JournalPosition
    ) -> JournalPosition? {
        switch kind {
        case .pairPosition, .pairTerm:
            guard let record = try? JournalCodec.decode(bytes) else { return nil }
            return position.advanced(by: record)
        default:
            return kind.isCounted ? JournalPosition(term: position.term, records: position.records &+ 1) : position
        }
    }

    /// The index after the last resumable record at `held` that is kept, or the tail's start at `base`.
    private func resumePoint(after held: JournalPosition) -> Int? {
        for index in (start..<window.count).reversed() {
            if case .record(_, let after, let resumable) = window[index], after == held {
                return resumable ? index + 1 : nil
            }
        }
        return held == base && baseResumable ? start : nil
    }

    /// The whole journal, from `records` (the file's; result files are sent from the results directory at
    /// its start). Nothing when the file cannot be read or does not reach what was written (the peer's next
    /// announcement asks again).
    private mutating func snapshot(of records: [[UInt8]]?) -> [Output] {
        guard let records else {
            next = nil
            snapshotProblem = "the journal file could not be read for a snapshot"
            return []
        }
        var packer = MessagePacker(from: .empty, snapshot: true)
        var position = JournalPosition.empty
        for bytes in records {
            // A record the journal file holds but this version cannot read is left out, as a replay skips it.
            guard let kind = JournalRecordKind.of(bytes), kind != .pairHistory,
                let after = Self.position(after: bytes, kind: kind, from: position)
            else { continue }
            position = after
            packer.add(JournalFraming.frame(bytes), after: after)
        }
        guard position == written else {
            next = nil
            snapshotProblem = "the journal file reaches \(position), not \(written) as written: no snapshot sent"
            return []
        }
        snapshotProblem = nil
        next = window.count
        return [.snapshotStart] + packer.finish() + [.snapshotEnd(reaches: written)]
    }

    /// The entries not sent yet.
    private mutating func pending() -> [Output] {
        guard let first = next, first < window.count else { return [] }
        next = window.count
        var packer = MessagePacker(from: position(before: first), snapshot: false)
        for entry in window[first...] {
            switch entry {
            case .resultFile(let batchID, let itemIndex): packer.add(resultFile: batchID, itemIndex: itemIndex)
            case .record(let framed, let after, _): packer.add(framed, after: after)
            }
        }
        return packer.finish()
    }

    /// The position before entry `index`.
    private func position(before index: Int) -> JournalPosition {
        for earlier in window[start..<index].reversed() {
            if case .record(_, let after, _) = earlier { return after }
        }
        return base
    }

    private mutating func keep(_ entry: Entry) {
        if case .record(let framed, _, _) = entry {
            keptRecords += 1
            keptBytes += framed.count
        }
        window.append(entry)
    }

    /// Lets go of the oldest entries sent: those the peer holds past the last `keptHeldRecords`, and any past
    /// `maxKeptBytes`.
    private mutating func trim() {
        let limit = next ?? window.count  // what is still to be sent stays
        while start < limit {
            let overBytes = keptBytes > maxKeptBytes
            guard overBytes || (keptRecords > Self.keptHeldRecords && peerHoldsEntry(at: start)) else { break }
            if case .record(let framed, let after, let resumable) = window[start] {
                keptRecords -= 1
                keptBytes -= framed.count
                base = after
                baseResumable = resumable
            }
            start += 1
        }
        if start == window.count {
            window = []
            next = next.map { _ in 0 }
            start = 0
        } else if start > 1024, start * 2 > window.count {
            window.removeFirst(start)
            next = next.map { $0 - start }
            start = 0
        }
    }

    /// Whether the peer holds entry `index` (a result file: the record after it).
    private func peerHoldsEntry(at index: Int) -> Bool {
        guard let peerHeld else { return false }
        for entry in window[index...] {
            if case .record(_, let after, _) = entry { return after <= peerHeld }
        }
        return false
    }
}

/// Packs records into `PairJournal` messages of at most `maxRecordsPerMessage` and about
/// `maxBytesPerMessage`, with result files between them in order.
private struct MessagePacker {
    private var out: [ReplicationSender.Output] = []
    private var from: JournalPosition
    private var reaches: JournalPosition
    private var bytes: [UInt8] = []
    private var count = 0
    private let snapshot: Bool

    init(from: JournalPosition, snapshot: Bool) {
        self.from = from
        self.reaches = from
        self.snapshot = snapshot
    }

    mutating func add(_ framed: [UInt8], after: JournalPosition) {
        bytes.append(contentsOf: framed)
        count += 1
        reaches = after
        if count >= ReplicationSender.maxRecordsPerMessage || bytes.count >= ReplicationSender.maxBytesPerMessage {
            close()
        }
    }

    mutating func add(resultFile batchID: String, itemIndex: UInt32) {
        close()
        out.append(.resultFile(batchID: batchID, itemIndex: itemIndex))
    }

    mutating func finish() -> [ReplicationSender.Output] {
        close()
        return out
    }

    private mutating func close() {
        guard count > 0 else { return }
        out.append(.frames(from: from, reaches: reaches, frames: bytes, count: count, snapshot: snapshot))
        from = reaches
        bytes = []
        count = 0
    }
}
