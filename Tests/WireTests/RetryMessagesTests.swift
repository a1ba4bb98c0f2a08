import Wire
import XCTest

/// `RetryBatch`, `RetryAccepted` and the journal's record of a retry travel intact, and their empty forms
/// (every failed item; nothing to re-run) read back as such.
final class RetryMessagesTests: XCTestCase {
    private func roundTrip(_ message: Message) throws -> Message {
        try WireCodec.decode(WireCodec.encode(message))
    }

    func testARetryRequestAndItsAnswerRoundTrip() throws {
        let request = RetryBatch(
            requestID: "r-1", batchID: "b-1a2b3c4d", items: ["rocket", "http://127.0.0.1/a.jpg", "7", "é"],
            acceptsBatches: true)
        XCTAssertEqual(try roundTrip(.retryBatch(request)), .retryBatch(request))
        let accepted = RetryAccepted(
            requestID: "r-1", batchID: "b-1a2b3c4d", itemIndexes: [1, 7, 40_000], itemCount: 40_001,
            coordinatorID: "c-9")
        XCTAssertEqual(try roundTrip(.retryAccepted(accepted)), .retryAccepted(accepted))
    }

    func testEmptyFormsMeanEveryFailedItemAndNothingToRerun() throws {
        guard case .retryBatch(let request) = try roundTrip(.retryBatch(RetryBatch(requestID: "r", batchID: "b")))
        else {
            return XCTFail("not a retry request")
        }
        XCTAssertEqual(request.items, [])
        XCTAssertFalse(request.acceptsBatches)
        guard
            case .retryAccepted(let accepted) = try roundTrip(
                .retryAccepted(
                    RetryAccepted(
                        requestID: "r", batchID: "b", itemIndexes: [], itemCount: 3)))
        else {
            return XCTFail("not a retry answer")
        }
        XCTAssertEqual(accepted.itemIndexes, [])
        XCTAssertEqual(accepted.itemCount, 3)
    }

    func testTheJournalRecordOfARetryRoundTrips() throws {
        let record = JournalRecord.batchRetried(
            batchID: "b-1", itemIndexes: [0, 5], unixMilliseconds: 1_790_000_000_000)
        XCTAssertEqual(try JournalCodec.decode(JournalCodec.encode(record)), record)
    }
}
