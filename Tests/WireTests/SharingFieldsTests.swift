import Wire
import XCTest

/// The fields of sharing the cluster (priority, idempotency key, attached) travel and are checked the
/// same way by clients and the coordinator.
final class SharingFieldsTests: XCTestCase {
    private func roundTrip(_ message: Message) throws -> Message {
        try WireCodec.decode(WireCodec.encode(message))
    }

    func testPriorityKeyAndAttachedRoundTrip() throws {
        for priority in [BatchPriority.range.lowerBound, -1, 0, 7, BatchPriority.range.upperBound] {
            var submit = SubmitBatch(requestID: "r", items: [BatchItem(source: "http://x/a.jpg")])
            submit.priority = priority
            submit.idempotencyKey = "nightly-2026-11-23:run@1"
            XCTAssertEqual(try roundTrip(.submitBatch(submit)), .submitBatch(submit))
        }
        var accepted = BatchAccepted(requestID: "r", batchID: "b-1", itemCount: 3, coordinatorID: "c")
        accepted.attached = true
        XCTAssertEqual(try roundTrip(.batchAccepted(accepted)), .batchAccepted(accepted))
        var status = BatchStatus(batchID: "b-1", itemCount: 3)
        status.priority = -4
        status.idempotencyKey = "k"
        let reply = StatusReply(requestID: "r", batches: [status])
        XCTAssertEqual(try roundTrip(.statusReply(reply)), .statusReply(reply))
    }

    func testASubmissionWithoutTheFieldsReadsAsNormalPriorityAndNoKey() throws {
        guard case .submitBatch(let decoded) = try roundTrip(.submitBatch(SubmitBatch(requestID: "r", items: [])))
        else {
            return XCTFail("not a submission")
        }
        XCTAssertEqual(decoded.priority, BatchPriority.normal)
        XCTAssertEqual(decoded.idempotencyKey, "")
    }

    func testPrioritiesAreParsedByNumberOrNameAndRefusedOutsideTheRangeWithTheRangeSaid() throws {
        XCTAssertEqual(try BatchPriority.parse("high"), 5)
        XCTAssertEqual(try BatchPriority.parse("LOW"), -5)
        XCTAssertEqual(try BatchPriority.parse("-10"), -10)
        for bad in ["11", "-11", "urgent", "", "1.5"] {
            XCTAssertThrowsError(try BatchPriority.parse(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("-10...10"), "\(error)")
            }
        }
        XCTAssertNil(BatchPriority.problem(10))
        XCTAssertTrue(BatchPriority.problem(-11)?.contains("-10...10") == true)
    }

    func testWeightsDoubleEveryTwoPoints() {
        XCTAssertEqual(BatchPriority.weight(of: 0), 32)
        XCTAssertEqual(BatchPriority.weight(of: 2), 64)
        XCTAssertEqual(BatchPriority.weight(of: -10), 1)
        XCTAssertEqual(BatchPriority.weight(of: 10), 1_024)
        let weights = BatchPriority.range.map(BatchPriority.weight(of:))
        XCTAssertEqual(weights, weights.sorted(), "a higher priority never weighs less")
    }

    func testIdempotencyKeysAreCheckedForLengthAndCharacters() {
        XCTAssertNil(IdempotencyKey.problem("a"))
        XCTAssertNil(IdempotencyKey.problem(String(repeating: "k", count: IdempotencyKey.maxLength)))
        XCTAssertTrue(IdempotencyKey.problem("")?.contains("empty") == true)
        XCTAssertTrue(IdempotencyKey.problem(String(repeating: "k", count: 129))?.contains("more than 128") == true)
        let control = IdempotencyKey.problem("a\nb") ?? ""
        XCTAssertTrue(control.contains("\\n") && control.contains("A-Z"), control)
        XCTAssertNotNil(IdempotencyKey.problem("key with spaces"))
    }
}
