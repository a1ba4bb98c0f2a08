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
            case .append(let records): journal += records
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
        var sender = ReplicationSender(records: openedJournal(compacted: [], at: .empty))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        XCTAssertEqual(sender.peerHolds(.empty), [])
        for id in ["a", "b", "c"] {
            for message in messages(sender.append(retired(id), bytes: JournalCodec.encode(retired(id)))) {
                passive.deliver(message, now: now)
            }
        }
        XCTAssertEqual(passive.contents, [retired("a"), retired("b"), retired("c")])
        XCTAssertEqual(passive.receiver.held, JournalPosition(term: 0, records: 3))
        XCTAssertEqual(passive.answers.last?.held, sender.written.wire)
        XCTAssertFalse(sender.peerCaughtUp, "not before the peer's answer")
        _ = sender.peerHolds(JournalPosition(passive.answers.last?.held))
        XCTAssertTrue(sender.peerCaughtUp)
        XCTAssertEqual(sender.lagRecords, 0)
    }

    func testAPeerBehindTheCompactionGetsASnapshotThenTheTail() {
        let position = JournalPosition(term: 2, records: 40)
        var sender = ReplicationSender(records: openedJournal(compacted: [retired("x"), retired("y")], at: position))
        XCTAssertEqual(sender.written, position)
        var passive = Passive(
            receiver: ReplicationReceiver(held: JournalPosition(term: 2, records: 10)),
            journal: [JournalCodec.encode(retired("old"))])
        let outputs = sender.peerHolds(JournalPosition(term: 2, records: 10))
        XCTAssertEqual(outputs.first, .snapshotStart)
        for message in messages(outputs) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("x"), retired("y")], "the snapshot replaced the older journal")
        XCTAssertEqual(passive.receiver.held, position)
        for message in messages(sender.append(retired("z"), bytes: JournalCodec.encode(retired("z")))) {
            passive.deliver(message, now: now)
        }
        XCTAssertEqual(passive.contents, [retired("x"), retired("y"), retired("z")])
        XCTAssertEqual(passive.receiver.held, JournalPosition(term: 2, records: 41))
        XCTAssertEqual(passive.answers.last?.held, JournalPosition(term: 2, records: 41).wire)
    }

    func testAPeerAtTheCompactionPointIsSentOnlyWhatFollows() {
        let position = JournalPosition(term: 1, records: 7)
        var sender = ReplicationSender(records: openedJournal(compacted: [retired("x")], at: position))
        let outputs = sender.peerHolds(position)
        XCTAssertEqual(outputs, [], "nothing written since")
        let next = sender.append(retired("n"), bytes: JournalCodec.encode(retired("n")))
        guard case .frames(let from, let reaches, _, let count, let snapshot) = next.first else {
            return XCTFail("expected frames, got \(next)")
        }
        XCTAssertEqual([from, reaches], [position, JournalPosition(term: 1, records: 8)])
        XCTAssertEqual(count, 1)
        XCTAssertFalse(snapshot)
    }

    func testAPeerWithANewerJournalIsSentNothing() {
        var sender = ReplicationSender(records: openedJournal(compacted: [], at: JournalPosition(term: 0, records: 5)))
        XCTAssertEqual(sender.peerHolds(JournalPosition(term: 1, records: 2)), [])
        XCTAssertEqual(sender.append(retired("a"), bytes: JournalCodec.encode(retired("a"))), [])
    }

    func testALostMessageIsAskedForOnceAndSentAgain() {
        var sender = ReplicationSender(records: openedJournal(compacted: [], at: .empty))
        var passive = Passive(receiver: ReplicationReceiver(held: .empty), journal: [])
        _ = sender.peerHolds(.empty)
        _ = sender.append(retired("lost"), bytes: JournalCodec.encode(retired("lost")))  // never delivered
        let second = messages(sender.append(retired("b"), bytes: JournalCodec.encode(retired("b"))))
        let third = messages(sender.append(retired("c"), bytes: JournalCodec.encode(retired("c"))))
        for message in second + third { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [], "nothing applied past a gap")
        XCTAssertEqual(passive.answers.count, 1, "the gap is asked for once, not once per message in flight")
        XCTAssertEqual(passive.answers.first?.gap, true)
        let again = sender.peerHolds(JournalPosition(passive.answers[0].held), gap: true)
        for message in messages(again) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("lost"), retired("b"), retired("c")])
        // The same records once more (a second answer crossing): held already, nothing appended twice.
        for message in messages(again) { passive.deliver(message, now: now) }
        XCTAssertEqual(passive.contents, [retired("lost"), retired("b"), retired("c")])
    }

    func testARecordThatFailsItsChecksumIsNeverApplied() {
        var sender = ReplicationSender(records: openedJournal(compacted: [], at: .empty))
        _ = sender.peerHolds(.empty)
        _ = sender.append(retired("a"), bytes: JournalCodec.encode(retired("a")))
        var outputs = sender.peerHolds(.empty, gap: true)
        outputs += sender.append(retired("b"), bytes: JournalCodec.encode(retired("b")))
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
        guard case .pairJournal(var miscounted) = messages(sender.peerHolds(.empty, gap: true))[0] else {
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
