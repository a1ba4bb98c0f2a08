import Wire
import XCTest

/// `JournalRecordKind`: a record's kind read from its top-level fields agrees with the decoded record, and
/// bytes that are no record's top level read as no kind.
final class JournalRecordKindTests: XCTestCase {
    private let pairRecords: [JournalRecord] = [
        .pairPosition(term: 2, records: 40), .pairTerm(3), .pairHistory("active-with-peer"),
        .attemptFailed(
            batchID: "b", itemIndex: 1, attempt: AttemptStatus(task: "download", attempt: 1, code: .download)),
    ]

    func testTheKindReadFromTheHeaderIsTheDecodedRecordsKind() throws {
        for record in JournalCodecTests.sampleRecords + pairRecords {
            let bytes = JournalCodec.encode(record)
            XCTAssertEqual(JournalRecordKind.of(bytes), record.kind, "\(record)")
            XCTAssertEqual(try JournalCodec.decode(bytes).kind, record.kind)
        }
    }

    func testWhatCountsAndWhatIsSyncedFollowTheJournal() {
        XCTAssertEqual(JournalRecordKind.allCases.filter { !$0.isCounted }, [.started, .pairPosition, .pairHistory])
        XCTAssertEqual(
            JournalRecordKind.allCases.filter(\.isSynced), [.batchAccepted, .batchRetried, .pairTerm, .pairHistory])
    }

    func testBytesThatAreNoRecordsTopLevelHaveNoKind() {
        XCTAssertNil(JournalRecordKind.of([]))
        XCTAssertNil(JournalRecordKind.of([0xFF, 0xFF, 0xFF]), "a key cut short")
        XCTAssertNil(JournalRecordKind.of([0x00, 0x00]), "field number 0")
        XCTAssertNil(JournalRecordKind.of([0x38, 0x01]), "an unknown field (7) alone: a record of no kind known")
        XCTAssertNil(JournalRecordKind.of([0x10, 0x01]), "a known field (2) that is not length-delimited")
        XCTAssertNil(JournalRecordKind.of([0x1B]), "a group")
        for record in JournalCodecTests.sampleRecords {
            let bytes = JournalCodec.encode(record)
            // The field's length says more than the bytes hold.
            XCTAssertNil(JournalRecordKind.of(Array(bytes.dropLast())), "\(record) cut short")
        }
        // An unknown field before a known one is skipped, as protobuf decoding skips it.
        XCTAssertEqual(
            JournalRecordKind.of([0x38, 0x01] + JournalCodec.encode(.batchRetired(batchID: "b"))), .batchRetired)
    }
}
