import Wire
import XCTest

/// The fields retries and deadlines added (minor-compatible: absent reads as before).
final class RetryFieldsRoundTripTests: XCTestCase {
    private func roundTrip(_ message: Message, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message, file: file, line: line)
    }

    func testTransientFailuresRetryLimitsDeadlinesAndAttemptsRoundTrip() {
        roundTrip(
            .taskResult(
                TaskResult(
                    taskID: "t", attempt: 3,
                    outcome: .failure(
                        TaskFailure(
                            code: .download, message: "HTTP 503", isTransient: true, retryAfterMs: 7_000)), taskKey: 4))
        )
        roundTrip(
            .taskResult(
                TaskResult(taskID: "t", attempt: 1, outcome: .failure(TaskFailure(code: .timedOut, message: "slow")))))
        for retries in [nil, 0, 2, 10] as [UInt32?] {
            roundTrip(
                .submitBatch(
                    SubmitBatch(
                        requestID: "r", items: [BatchItem(source: "http://x/a.jpg")],
                        retries: retries, deadlineSeconds: retries == nil ? 0 : 60)))
        }
        roundTrip(
            .statusReply(
                StatusReply(
                    requestID: "s",
                    batches: [
                        BatchStatus(
                            batchID: "b", itemCount: 1,
                            items: [
                                ItemStatus(
                                    itemIndex: 0, source: "http://x/a.jpg", state: "succeeded", attempts: 3,
                                    failedAttempts: [
                                        AttemptStatus(
                                            task: "download", attempt: 1, code: .download, error: "HTTP 503",
                                            isTransient: true,
                                            retried: true, retryDelayMs: 420, worker: "w-1"),
                                        AttemptStatus(
                                            task: "download", attempt: 2, code: .timedOut, error: "timed out after 3 s",
                                            isTransient: true, retried: true, retryDelayMs: 0, worker: "w-2"),
                                    ])
                            ])
                    ])))
    }

    func testRetriesZeroIsDistinctFromNotSet() throws {
        let zero = try WireCodec.decode(
            WireCodec.encode(.submitBatch(SubmitBatch(requestID: "r", items: [], retries: 0))))
        guard case .submitBatch(let submit) = zero else { return XCTFail("\(zero)") }
        XCTAssertEqual(submit.retries, 0, "0 retries is said, not the default")
        let unset = try WireCodec.decode(WireCodec.encode(.submitBatch(SubmitBatch(requestID: "r", items: []))))
        guard case .submitBatch(let plain) = unset else { return XCTFail("\(unset)") }
        XCTAssertNil(plain.retries)
    }
}
