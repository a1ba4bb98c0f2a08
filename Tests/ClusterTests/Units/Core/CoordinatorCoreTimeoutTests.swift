import Wire
import XCTest

@testable import Cluster

/// Time limits and re-runs in the core: a task past the task timeout, and `RetryBatch`.
final class CoordinatorCoreTimeoutTests: XCTestCase {
    private typealias F = CoreFixtures

    func testATaskPastTheTimeoutIsCancelledOnItsWorkerAndRetriedOnceTheWorkerConfirms() throws {
        var driver = CoreDriver(taskTimeout: .seconds(10))
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 1), from: MessageSender(identity: F.w1, key: nil)))
        let first = try XCTUnwrap(
            driver.handle(.submit(F.noops(1, retries: 1), from: F.client, batchID: "b1")).assignments().first)
        driver.advance(.seconds(11))
        driver.handle(.heartbeat(Heartbeat(workerID: "w1", running: 1), from: F.w1))
        let judged = driver.handle(.judgeSilence)
        XCTAssertEqual(judged.sent.map(\.message).count, 1)
        guard case .cancelTask(let cancel)? = judged.sent.first?.message else { return XCTFail("\(judged)") }
        XCTAssertEqual(cancel.taskKey, first.taskKey)
        XCTAssertTrue(judged.journaled.isEmpty, "not failed before its worker confirms")

        let confirmed = driver.handle(.results([.failure(first, TaskFailure(code: .cancelled))], from: F.w1))
        guard case .attemptFailed(_, _, let attempt)? = confirmed.journaled.first else {
            return XCTFail("\(confirmed)")
        }
        XCTAssertEqual(attempt.code, .timedOut)
        XCTAssertTrue(attempt.error.contains("timed out after 10 s"), attempt.error)
        XCTAssertEqual(confirmed.timers.map(\.1), [.retry(first.taskKey)], "retried as the batch's retries allow")
    }

    func testRetryingAFinishedBatchRunsItsFailedItemsAgainAsNewAttempts() throws {
        var driver = CoreDriver()
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 2), from: MessageSender(identity: F.w1, key: nil)))
        let sent = driver.handle(.submit(F.noops(2), from: F.client, batchID: "b1")).assignments()
        driver.handle(
            .results(
                [
                    .success(sent[0], TaskOutput(data: [], mediaType: "")),
                    .failure(sent[1], TaskFailure(code: .processing, message: "bad pixels")),
                ], from: F.w1))
        XCTAssertNil(driver.core.runs["b1"], "finished")

        let retried = driver.handle(.retryBatch(RetryBatch(requestID: "again", batchID: "b1"), from: F.client.identity))
        XCTAssertEqual(retried.journaled, [.retried(batchID: "b1", itemIndexes: [1])])
        XCTAssertNotNil(retried.sent.first { if case .retryAccepted = $0.message { true } else { false } })
        let again = try XCTUnwrap(retried.assignments().first)
        XCTAssertEqual(again.taskID, "b1/1")
        XCTAssertNotEqual(again.taskKey, sent[1].taskKey, "new keys: a late result of the old run is stale")
        let end = driver.handle(.results([.success(again, TaskOutput(data: [], mediaType: ""))], from: F.w1))
        XCTAssertEqual(end.batchesFinished.map(\.succeeded), [2])
    }

    func testARetryTheJournalCannotRecordIsRefusedAndReopensNothing() throws {
        var driver = CoreDriver()
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 2), from: MessageSender(identity: F.w1, key: nil)))
        let sent = driver.handle(.submit(F.noops(1), from: F.client, batchID: "b1")).assignments()
        driver.handle(.results([.failure(sent[0], TaskFailure(code: .processing, message: "bad pixels"))], from: F.w1))

        let refused = driver.handle(
            .retryBatch(RetryBatch(requestID: "again", batchID: "b1"), from: F.client.identity),
            journalRefuses: true)
        let refusal = try XCTUnwrap(
            refused.sent.compactMap { if case .refusal(let r) = $0.message { r } else { nil } }.first)
        XCTAssertEqual(refusal.code, .unavailable)
        XCTAssertTrue(refusal.reason.contains("the disk is full"), refusal.reason)
        XCTAssertTrue(refused.assignments().isEmpty, "nothing runs again")
        XCTAssertNil(driver.core.runs["b1"])
        XCTAssertTrue(driver.core.pendingRetries.isEmpty)
        // Asked again, with a journal that takes it: the item runs again.
        let retried = driver.handle(.retryBatch(RetryBatch(requestID: "again", batchID: "b1"), from: F.client.identity))
        XCTAssertEqual(retried.assignments().map(\.taskID), ["b1/0"])
    }
}
