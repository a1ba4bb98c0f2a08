import Wire
import XCTest

/// The fields attempts lost with their workers, and journaled attempts, added (minor-compatible: absent
/// reads as before).
final class AttemptFieldsRoundTripTests: XCTestCase {
    private let lost = AttemptStatus(
        task: "tilt-shift", attempt: 2, code: .workerLost,
        error: "worker lost: its tilt-shift was on worker w-1, which died",
        isTransient: true, retried: true, retryDelayMs: 310, worker: "w-1", failedUnixMilliseconds: 1_795_000_000_123)

    func testAWorkerLostAttemptAndItsTimeRoundTripInStatus() throws {
        let reply = Message.statusReply(
            StatusReply(
                requestID: "s",
                batches: [
                    BatchStatus(
                        batchID: "b", itemCount: 1,
                        items: [
                            ItemStatus(
                                itemIndex: 0, source: "http://x/a.jpg", state: "failed", attempts: 2,
                                failedAttempts: [lost])
                        ])
                ]))
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(reply)), reply)
        XCTAssertEqual(FailureCode.workerLost.rawValue, 210)
        XCTAssertEqual(FailureCode.workerLost.name, "worker-lost")
        let failure = Message.taskResult(
            TaskResult(
                taskID: "t", attempt: 1,
                outcome: .failure(
                    TaskFailure(
                        code: .workerLost, message: "lost", isTransient: true)), taskKey: 3))
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(failure)), failure)
    }

    func testAnAttemptWithoutATimeReadsAsZero() throws {
        var plain = lost
        plain.failedUnixMilliseconds = 0
        let reply = Message.statusReply(
            StatusReply(
                requestID: "s",
                batches: [
                    BatchStatus(
                        batchID: "b", itemCount: 1,
                        items: [
                            ItemStatus(itemIndex: 0, state: "failed", failedAttempts: [plain])
                        ])
                ]))
        guard case .statusReply(let decoded) = try WireCodec.decode(WireCodec.encode(reply)) else {
            return XCTFail("a reply")
        }
        XCTAssertEqual(decoded.batches.first?.items.first?.failedAttempts.first?.failedUnixMilliseconds, 0)
    }

    func testTheJournalRecordOfAFailedAttemptRoundTrips() throws {
        let record = JournalRecord.attemptFailed(batchID: "b-1", itemIndex: 4, attempt: lost)
        XCTAssertEqual(try JournalCodec.decode(JournalCodec.encode(record)), record)
        let bytes = JournalCodec.encode(record)
        for cut in 1..<bytes.count {
            _ = try? JournalCodec.decode(Array(bytes.prefix(cut)))  // an error or a shorter record, never a trap
        }
    }
}
