import Wire

/// The passive coordinator's side of the journal stream, free of I/O: checks every message the active one
/// sends, says which records to append to its own journal (or which journal replaces it, after a
/// snapshot), whether to sync them first, and what to answer (`PairHeld`).
///
/// A message is applied whole or not at all: every frame must pass its CRC-32 and read as a record of a
/// known kind (`JournalRecordKind`: its top-level fields, every length checked; `pairPosition` and
/// `pairTerm`, which set the position from their body, are decoded whole), and the records must count and
/// reach what the message says. A message that does not start where this journal holds is a gap (something
/// was lost on a reconnect): nothing of it is applied, and the answer asks for the stream again from `held`.
/// Records already held (sent again) are skipped.
///
/// Durability: what the active coordinator writes with `fdatasync` (an accepted batch, a retry, a new term:
/// `JournalRecordKind.isSynced`) is held here as durably before `PairHeld` covers it: a message that holds
/// such a record is appended with one `fdatasync` (`Apply.append(sync: true)`), whatever its number of
/// records; one of finished items alone is not synced, as the active one does not sync those either.
struct ReplicationReceiver {
    /// What to do with a message.
    enum Apply: Equatable {
        /// Append these framed records (the journal's own framing, checked) to the journal with one write;
        /// the journal then holds `reaches`. `sync`: on stable storage (`fdatasync`) before the answer goes.
        case append(frames: [UInt8], records: Int, reaches: JournalPosition, sync: Bool)
        /// Replace the journal with these records (a snapshot ended; replaced atomically, synced).
        case replace([[UInt8]])
    }

    /// How far this coordinator's journal holds the active one's.
    private(set) var held: JournalPosition
    /// A snapshot being received: its records so far, and how far they reach.
    private var staged: (records: [[UInt8]], reaches: JournalPosition)?
    /// Messages refused (a bad checksum, a wrong count, a gap, a snapshot that would replace newer data).
    private(set) var refusedMessages: UInt64 = 0
    /// Why the last message was refused, for the log.
    private(set) var lastRefusal: String?
    /// The last time a gap was answered, and at which position: the messages still in flight after a loss
    /// would each ask again, and each answer makes the active one send everything again.
    private var lastGapAnswer: (held: JournalPosition, at: ContinuousClock.Instant)?
    /// How long a gap answered stays answered (the same gap is asked for again after this).
    static let gapRepeat: Duration = .seconds(1)

    /// A receiver for a journal that holds `held`.
    init(held: JournalPosition) {
        self.held = held
    }

    /// Records per message at most, and the largest record (as the journal file takes it).
    static let maxRecords = 10_000
    static let maxRecordSize = JournalFile.maxRecordSize

    /// Whether a snapshot is being received.
    var isReceivingSnapshot: Bool { staged != nil }

    /// Checks a `PairJournal`; returns what to apply (nothing when it is refused or held already) and the
    /// answer to send once it is applied.
    mutating func receive(
        _ message: WirePairJournal, now: ContinuousClock.Instant
    ) -> (apply: Apply?, answer: WirePairHeld?) {
        let result = check(message)
        guard let answer = result.answer, answer.gap else { return result }
        // A gap is answered once (until it is mended, or for `gapRepeat`): what was in flight asks no more.
        if let last = lastGapAnswer, last.held == held, now - last.at < Self.gapRepeat { return (nil, nil) }
        lastGapAnswer = (held, now)
        return result
    }

    private mutating func check(_ message: WirePairJournal) -> (apply: Apply?, answer: WirePairHeld?) {
        let from = JournalPosition(message.from)
        let reaches = JournalPosition(message.reaches)
        guard Int(message.records) <= Self.maxRecords else {
            return refuse("\(message.records) records in one message: over the limit of \(Self.maxRecords)")
        }
        let frames: CheckedFrames
        switch CheckedFrames.read(message.frames, from: from, after: held) {
        case .failure(let problem): return refuse(problem.description)
        case .success(let checked): frames = checked
        }
        guard frames.count == Int(message.records) else {
            return refuse(
                "\(frames.count) records in a message that says \(message.records): nothing of the message applied")
        }
        guard frames.reaches == reaches else {
            return refuse(
                "the records reach \(frames.reaches), not \(reaches) as the message says: nothing of it applied")
        }
        if message.snapshot {
            // The rest of a snapshot abandoned here (its answer asked for the stream again): dropped.
            guard var snapshot = staged else { return (nil, nil) }
            guard from == snapshot.reaches else {
                staged = nil
                return refuse(
                    "a snapshot's records do not follow on (\(from) after \(snapshot.reaches)): it starts again")
            }
            snapshot.records += message.frames.withUnsafeBytes {
                JournalFraming.records(in: $0, maxRecordSize: Self.maxRecordSize).records
            }
            snapshot.reaches = reaches
            staged = snapshot
            return (nil, nil)
        }
        staged = nil  // a live message: a snapshot whose end was lost is abandoned
        guard from <= held else {
            refusedMessages += 1
            lastRefusal = "the stream skipped from \(held) to \(from): asking for it again"
            return (nil, WirePairHeld(held: held.wire, gap: true))
        }
        // Skip what is held already (sent again after a gap).
        guard reaches > held || (reaches == held && frames.fresh.isEmpty) else {
            return (nil, WirePairHeld(held: held.wire))
        }
        held = max(held, reaches)
        guard !frames.fresh.isEmpty else { return (nil, WirePairHeld(held: held.wire)) }
        let fresh =
            frames.fresh == [0..<message.frames.count]
            ? message.frames : frames.fresh.reduce(into: []) { $0 += message.frames[$1] }
        return (
            .append(frames: fresh, records: frames.freshCount, reaches: held, sync: frames.freshNeedsSync),
            WirePairHeld(held: held.wire)
        )
    }

    /// A `PairSnapshot`: its start stages a new journal; its end returns it to replace this one, unless
    /// it would replace a newer journal or did not arrive whole.
    mutating func receive(_ snapshot: WirePairSnapshot) -> (apply: Apply?, answer: WirePairHeld?) {
        guard snapshot.end else {
            staged = ([], .empty)
            return (nil, nil)
        }
        guard let complete = staged else {
            return (nil, nil)  // a snapshot abandoned here: its answer asked for the stream again
        }
        staged = nil
        let reaches = JournalPosition(snapshot.reaches)
        guard complete.reaches == reaches else {
            return refuse("a snapshot reached \(complete.reaches), not \(reaches) as its end says: not applied")
        }
        guard reaches >= held else {
            return refuse(
                "the active coordinator's journal (\(reaches)) is older than this one's (\(held)): not replacing it")
        }
        held = reaches
        return (.replace(complete.records), WirePairHeld(held: held.wire))
    }

    /// A `PairResultFile`'s fields, checked: `nil` when it may be written, else why not.
    static func problem(with file: WirePairResultFile) -> String? {
        guard !file.batchID.isEmpty, file.batchID.utf8.count <= MessageBounds.maxIDBytes,
            file.batchID != ".", file.batchID != "..",
            file.batchID.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || $0.properties.numericType != nil
                        || "._-".unicodeScalars.contains($0))
            })
        else {
            return
                "a result file's batch ID is not a name of A-Z a-z 0-9 . _ - (1 to \(MessageBounds.maxIDBytes) bytes)"
        }
        guard Int(file.itemIndex) < MessageBounds.maxItemsPerBatch else {
            return "a result file's item index \(file.itemIndex) is over the limit of \(MessageBounds.maxItemsPerBatch)"
        }
        guard CRC32.checksum(file.data) == file.crc32 else {
            return "a result file of batch \(file.batchID) item \(file.itemIndex) failed its checksum: not written"
        }
        return nil
    }

    /// The journal was written differently than this receiver assumed (a write failed, or it was replaced):
    /// it holds `position`.
    mutating func reset(held position: JournalPosition) {
        held = position
        staged = nil
    }

    private mutating func refuse(_ reason: String) -> (apply: Apply?, answer: WirePairHeld?) {
        refusedMessages += 1
        lastRefusal = reason
        return (nil, WirePairHeld(held: held.wire, gap: true, rejected: true))
    }
}
