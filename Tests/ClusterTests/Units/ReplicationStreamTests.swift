import Wire
import XCTest

@testable import Cluster

/// The journal stream between a pair's coordinators, as values without sockets: `ReplicationSender` (the
/// active side) and `ReplicationReceiver` (the passive side), carried by hand between the two, with
/// messages lost, sent again, damaged, and a peer behind the active one's compaction.
final class ReplicationStreamTests: XCTestCase {
    private var now = ContinuousClock.now

    private func retired(_ id: String) -> JournalRecord { .batchRetired(batchID: id) }

    /// A journal file as `Journal.open` leaves it: `started`, compacted records, the position checkpoint.
    private func openedJournal(compacted: [JournalRecord], at position: JournalPosition) -> [[UInt8]] {
        ([.started(coordinatorID: "c", incarnation: 1, unixMilliseconds: 0)] + compacted
            + [.pairPosition(term: position.term, records: position.records)]).map(JournalCodec.encode)
    }

    /// The active side: a sender and its journal file (records as the file holds them, unframed), fed as the
    /// actor feeds them.
    private struct Active {
        var sender: ReplicationSender
        var file: [[UInt8]]

        init(records: [[UInt8]], maxKeptBytes: Int = ReplicationSender.maxKeptBytes) {
            sender = ReplicationSender(records: records, maxKeptBytes: maxKeptBytes)
            file = records
        }

        /// Records written in one wake-up of the actor: streamed together.
        mutating func write(_ records: [JournalRecord]) -> [ReplicationSender.Output] {
            let written = records.map { record -> Journal.Written in
                let bytes = JournalCodec.encode(record)
                file.append(bytes)
                return .record(record, framed: JournalFraming.frame(bytes))
            }
            return sender.append(contentsOf: written)
        }

        mutating func write(_ record: JournalRecord) -> [ReplicationSender.Output] {
            let bytes = JournalCodec.encode(record)
            file.append(bytes)
            return sender.append(record, framed: JournalFraming.frame(bytes))
        }

        mutating func peerHolds(_ held: JournalPosition, gap: Bool = false) -> [ReplicationSender.Output] {
            let file = file
            return sender.peerHolds(held, gap: gap, journal: { file })
        }
    }

    /// `outputs` as the wire messages the actor sends.
    private func messages(_ outputs: [ReplicationSender.Output]) -> [Message] {
        outputs.map { output in
            switch output {
            case .snapshotStart: .pairSnapshot(WirePairSnapshot(end: false, reaches: nil))
            case .snapshotEnd(let reaches): .pairSnapshot(WirePairSnapshot(end: true, reaches: reaches.wire))
            case .resultFile(let batchID, let index):
                .pairResultFile(
                    WirePairResultFile(batchID: batchID, itemIndex: index, data: [1], crc32: CRC32.checksum([1])))
            case .frames(let from, let reaches, let frames, let count, let snapshot):
                .pairJournal(
                    WirePairJournal(
                        from: from.wire, reaches: reaches.wire, frames: frames, records: UInt32(count),
                        snapshot: snapshot))
            }
        }
    }

    /// The passive side: a receiver and the journal it keeps (records as appended or replaced).
    private struct Passive {
        var receiver: ReplicationReceiver
        var journal: [[UInt8]]
        var answers: [WirePairHeld] = []

        mutating func deliver(_ message: Message, now: ContinuousClock.Instant) {
            var result: (apply: ReplicationReceiver.Apply?, answer: WirePairHeld?) = (nil, nil)
            switch message {
            case .pairJournal(let journal): result = receiver.receive(journal, now: now)
            case .pairSnapshot(let snapshot): result = receiver.receive(snapshot)
            default: return
            }
            switch result.apply {
            case .append(let frames, let count, let reaches, _):
                let records = frames.withUnsafeBytes { JournalFraming.records(in: $0, maxRecordSize: 1 << 20).records }
                XCTAssertEqual(records.count, count)
                XCTAssertEqual(reaches, receiver.held)
                journal += records
            case .replace(let records): journal = records
            case nil: break
            }
            if let answer = result.answer { answers.append(answer) }
        }

        /// The journal's records, decoded, without those that only say where it stands.
        var contents: [JournalRecord] {
            journal.compactMap { try? JournalCodec.decode($0) }.filter {
                switch $0 {
                case .started, .pairPosition, .pairHistory: false
                default: true
                }
            }
        }
    }

    func testAFreshPeerIsSentTheLiveTailAndHoldsWhatTheActiveOneWrote() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        XCTAssertEqual(active.peerHolds(.empty), [])
        for id in ["a", "b", "c"] {
            for message in messages(active.write(retired(id))) {
                passive.deliver(message, now: now)
            }
        }
        XCTAssertEqual(passive.contents, [retired("a"), retired("b"), retired("c")])
        XCTAssertEqual(passive.receiver.held, JournalPosition(term: 0, records: 3))
        XCTAssertEqual(passive.answers.last?.held, active.sender.written.wire)
        XCTAssertFalse(active.sender.peerCaughtUp, "not before the peer's answer")
        _ = active.peerHolds(JournalPosition(passive.answers.last?.held))
        XCTAssertTrue(active.sender.peerCaughtUp)
        XCTAssertEqual(active.sender.lagRecords, 0)
    }

    func testAPeerBehindTheCompactionGetsASnapshotThenTheTail() {
        let position = JournalPosition(term: 2, records: 40)
        var active = Active(records: openedJournal(compacted: [retired("x"), retired("y")], at: position))
        XCTAssertEqual(active.sender.written, position)
        var passive = Passive(
            receiver: ReplicationReceiver(held: JournalPosition(term: 2, records: 10)),
            journal: [JournalCodec.encode(retired("old"))])
        let outputs = active.peerHolds(JournalPosition(term: 2, records: 10))
        XCTAssertEqual(outputs.first, .snapshotStart)
        for message in messages(outputs) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("x"), retired("y")], "the snapshot replaced the older journal")
        XCTAssertEqual(passive.receiver.held, position)
        for message in messages(active.write(retired("z"))) {
            passive.deliver(message, now: now)
        }
        XCTAssertEqual(passive.contents, [retired("x"), retired("y"), retired("z")])
        XCTAssertEqual(passive.receiver.held, JournalPosition(term: 2, records: 41))
        XCTAssertEqual(passive.answers.last?.held, JournalPosition(term: 2, records: 41).wire)
    }

    func testAPeerAtTheCompactionPointIsSentOnlyWhatFollows() {
        let position = JournalPosition(term: 1, records: 7)
        var active = Active(records: openedJournal(compacted: [retired("x")], at: position))
        let outputs = active.peerHolds(position)
        XCTAssertEqual(outputs, [], "nothing written since")
        let next = active.write(retired("n"))
        guard case .frames(let from, let reaches, _, let count, let snapshot) = next.first else {
            return XCTFail("expected frames, got \(next)")
        }
        XCTAssertEqual([from, reaches], [position, JournalPosition(term: 1, records: 8)])
        XCTAssertEqual(count, 1)
        XCTAssertFalse(snapshot)
    }

    func testAPeerWithANewerJournalIsSentNothing() {
        var active = Active(records: openedJournal(compacted: [], at: JournalPosition(term: 0, records: 5)))
        XCTAssertEqual(active.peerHolds(JournalPosition(term: 1, records: 2)), [])
        XCTAssertEqual(active.write(retired("a")), [])
    }

    func testALostMessageIsAskedForOnceAndSentAgain() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        _ = active.peerHolds(.empty)
        _ = active.write(retired("lost"))  // never delivered
        let second = messages(active.write(retired("b")))
        let third = messages(active.write(retired("c")))
        for message in second + third { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [], "nothing applied past a gap")
        XCTAssertEqual(passive.answers.count, 1, "the gap is asked for once, not once per message in flight")
        XCTAssertEqual(passive.answers.first?.gap, true)
        let again = active.peerHolds(JournalPosition(passive.answers[0].held), gap: true)
        for message in messages(again) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("lost"), retired("b"), retired("c")])
        // The same records once more (a second answer crossing): held already, nothing appended twice.
        for message in messages(again) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("lost"), retired("b"), retired("c")])
    }

    func testARecordThatFailsItsChecksumIsNeverApplied() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        _ = active.peerHolds(.empty)
        _ = active.write(retired("a"))
        var outputs = active.peerHolds(.empty, gap: true)
        outputs += active.write(retired("b"))
        var damaged = messages(outputs)
        guard case .pairJournal(var journal) = damaged[0] else { return XCTFail("expected a PairJournal") }
        journal.frames[journal.frames.count - 1] ^= 0x01  // one bit of the last record's bytes
        damaged[0] = .pairJournal(journal)
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        passive.deliver(damaged[0], now: now)
        XCTAssertEqual(passive.journal, [], "a frame failing its CRC-32 makes the whole message unapplied")
        XCTAssertEqual(passive.answers.last?.rejected, true)
        XCTAssertEqual(passive.receiver.held, .empty)
        XCTAssertEqual(passive.receiver.refusedMessages, 1)
        // A count that does not match, or a position the records do not reach, is refused too.
        guard case .pairJournal(var miscounted) = messages(active.peerHolds(.empty, gap: true))[0] else {
            return XCTFail("expected a PairJournal")
        }
        miscounted.records += 1
        passive.deliver(.pairJournal(miscounted), now: now + .seconds(2))
        XCTAssertEqual(passive.journal, [])
        miscounted.records -= 1
        miscounted.reaches = JournalPosition(term: 0, records: 9).wire
        passive.deliver(.pairJournal(miscounted), now: now + .seconds(4))
        XCTAssertEqual(passive.journal, [])
        XCTAssertEqual(passive.receiver.refusedMessages, 3)
    }

    func testASnapshotThatWouldReplaceANewerJournalIsRefused() {
        var receiver = ReplicationReceiver(held: JournalPosition(term: 3, records: 1))
        _ = receiver.receive(WirePairSnapshot(end: false, reaches: nil))
        let end = receiver.receive(WirePairSnapshot(end: true, reaches: WirePairPosition(term: 0, records: 0)))
        XCTAssertNil(end.apply)
        XCTAssertEqual(receiver.held, JournalPosition(term: 3, records: 1))
    }

    // MARK: - The sender's memory

    func testTheTailKeptStaysBoundedOverAHundredThousandRecordsWithAPeerThatKeepsUp() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        XCTAssertEqual(active.peerHolds(.empty), [])
        var mostKept = 0
        for index in 0..<100_000 {
            for message in messages(active.write(retired("b\(index)"))) { passive.deliver(message, now: now) }
            if let answer = passive.answers.popLast() { _ = active.peerHolds(JournalPosition(answer.held)) }
            mostKept = max(mostKept, active.sender.keptEntries)
        }
        XCTAssertEqual(passive.receiver.held, JournalPosition(term: 0, records: 100_000))
        XCTAssertEqual(passive.journal.count, 100_000)
        XCTAssertTrue(active.sender.peerCaughtUp)
        XCTAssertLessThanOrEqual(mostKept, ReplicationSender.keptHeldRecords + 1, "what the peer holds goes")
        XCTAssertLessThanOrEqual(active.sender.keptRecords, ReplicationSender.keptHeldRecords)
    }

    func testAPeerThatReconnectsBehindWhatIsKeptGetsEverythingFromTheFile() {
        let compacted = JournalPosition(term: 0, records: 1)
        var active = Active(records: openedJournal(compacted: [retired("old")], at: compacted))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        let first = active.peerHolds(.empty)
        XCTAssertEqual(first.first, .snapshotStart, "an empty peer is behind the compaction")
        for message in messages(first) { passive.deliver(message, now: now) }
        var early: Passive?
        var late: Passive?
        for index in 0..<10_000 {
            for message in messages(active.write(retired("b\(index)"))) { passive.deliver(message, now: now) }
            if let answer = passive.answers.popLast() { _ = active.peerHolds(JournalPosition(answer.held)) }
            if index == 500 { early = passive }
            if index == 9_000 { late = passive }
        }
        XCTAssertLessThanOrEqual(active.sender.keptRecords, ReplicationSender.keptHeldRecords)
        guard var early, var late else { return XCTFail("no copies of the passive side") }
        let everything = [retired("old")] + (0..<10_000).map { retired("b\($0)") }
        XCTAssertEqual(passive.contents, everything)
        // Restarted with what it held at record 502: behind what is kept, it gets the snapshot read from the file.
        active.sender.peerLost()
        let fromFile = active.peerHolds(early.receiver.held)
        XCTAssertEqual(fromFile.first, .snapshotStart)
        for message in messages(fromFile) { early.deliver(message, now: now) }
        XCTAssertEqual(early.contents, everything)
        XCTAssertEqual(early.receiver.held, active.sender.written)
        // Restarted with what it held at record 9,002: within what is kept, it is sent only what follows.
        active.sender.peerLost()
        let tail = active.peerHolds(late.receiver.held)
        XCTAssertFalse(tail.contains(.snapshotStart))
        guard case .frames(let from, _, _, let count, _) = tail.first else { return XCTFail("expected frames") }
        XCTAssertEqual(from, late.receiver.held)
        XCTAssertEqual(count, 999)
        for message in messages(tail) { late.deliver(message, now: now) }
        XCTAssertEqual(late.contents, everything)
    }

    func testWithoutAPeerTheTailKeptStaysWithinItsBytes() {
        var active = Active(records: openedJournal(compacted: [], at: .empty), maxKeptBytes: 4096)
        for index in 0..<2_000 { _ = active.write(retired("b\(index)")) }
        XCTAssertLessThanOrEqual(active.sender.keptBytes, 4096)
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        let outputs = active.peerHolds(.empty)
        XCTAssertEqual(outputs.first, .snapshotStart, "the records let go are read from the file")
        for message in messages(outputs) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, (0..<2_000).map { retired("b\($0)") })
    }

    func testABurstGoesInOneMessage() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        _ = active.peerHolds(.empty)
        let outputs = active.write((0..<2_500).map { retired("b\($0)") })
        XCTAssertEqual(
            outputs.map { if case .frames(_, _, _, let count, _) = $0 { count } else { 0 } }, [1_000, 1_000, 500],
            "at most maxRecordsPerMessage records a message")
    }

    // MARK: - The backup's durability

    private func finished(_ index: UInt32) -> JournalRecord {
        .itemFinished(
            ItemFinished(
                batchID: "b", itemIndex: index,
                outcome: .output(TaskOutput(data: [], mediaType: "", width: 0, height: 0))))
    }

    private let accepted = JournalRecord.batchAccepted(
        batchID: "b", client: [], submit: SubmitBatch(requestID: "", items: [], kind: .noop), unixMilliseconds: 0)

    func testAMessageWithARecordTheActiveOneSyncedIsSyncedOnceOnThePassiveOne() {
        var active = Active(records: openedJournal(compacted: [], at: .empty))
        _ = active.peerHolds(.empty)
        var receiver = ReplicationReceiver(held: .empty)
        func applied(_ outputs: [ReplicationSender.Output]) -> [ReplicationReceiver.Apply] {
            messages(outputs).compactMap {
                guard case .pairJournal(let journal) = $0 else { return nil }
                return receiver.receive(journal, now: now).apply
            }
        }
        let two = JournalPosition(term: 0, records: 2)
        let five = JournalPosition(term: 0, records: 5)
        guard
            case .append(_, let count, let reaches, let sync) = applied(active.write([finished(0), finished(1)])).first
        else { return XCTFail("expected an append") }
        XCTAssertEqual([count], [2])
        XCTAssertEqual(reaches, two)
        XCTAssertFalse(sync, "finished items are not synced on the active one either")
        let burst = applied(active.write([finished(2), accepted, finished(3)]))
        guard burst.count == 1, case .append(_, 3, five, let synced) = burst[0] else {
            return XCTFail("expected one append of 3 records, got \(burst)")
        }
        XCTAssertTrue(synced, "one sync for the message, for the accepted batch in it")
        for record in [JournalRecord.batchRetried(batchID: "b", itemIndexes: [1], unixMilliseconds: 0), .pairTerm(2)] {
            guard case .append(_, 1, _, true) = applied(active.write([record])).first else {
                return XCTFail("\(record) is synced")
            }
        }
        for record in [JournalRecord.batchCancelled(CancelBatch(batchID: "b")), retired("b"), finished(4)] {
            guard case .append(_, 1, _, false) = applied(active.write([record])).first else {
                return XCTFail("\(record) is not synced")
            }
        }
    }

    func testARecordSyncedAlreadyHeldDoesNotMakeItsMessageSynced() {
        let frames = [accepted, finished(0)].map { JournalFraming.frame(JournalCodec.encode($0)) }.joined()
        let all = CheckedFrames.read(Array(frames), from: .empty, after: .empty)
        let tail = CheckedFrames.read(Array(frames), from: .empty, after: JournalPosition(term: 0, records: 1))
        XCTAssertEqual(try all.get().freshNeedsSync, true)
        XCTAssertEqual(try all.get().freshCount, 2)
        XCTAssertEqual(try tail.get().freshNeedsSync, false, "the accepted batch is held (and synced) already")
        XCTAssertEqual(try tail.get().freshCount, 1)
    }

    func testAFrameThatPassesItsChecksumButIsNoRecordIsRefused() {
        var receiver = ReplicationReceiver(held: .empty)
        let message = WirePairJournal(
            from: JournalPosition.empty.wire, reaches: JournalPosition(term: 0, records: 1).wire,
            frames: JournalFraming.frame([0xFF, 0xFF, 0xFF]), records: 1, snapshot: false)
        let result = receiver.receive(message, now: now)
        XCTAssertNil(result.apply)
        XCTAssertEqual(result.answer?.rejected, true)
        XCTAssertEqual(receiver.held, .empty)
    }

    func testAResultFileIsCheckedBeforeItIsWritten() {
        let good = WirePairResultFile(batchID: "b-1.x_y", itemIndex: 3, data: [1, 2], crc32: CRC32.checksum([1, 2]))
        XCTAssertNil(ReplicationReceiver.problem(with: good))
        var damaged = good
        damaged.data = [1, 3]
        XCTAssertNotNil(ReplicationReceiver.problem(with: damaged))
        for name in ["../etc", "a/b", "", "..", String(repeating: "a", count: 300)] {
            var file = good
            file.batchID = name
            XCTAssertNotNil(ReplicationReceiver.problem(with: file), "batch ID \(name)")
        }
    }
}
