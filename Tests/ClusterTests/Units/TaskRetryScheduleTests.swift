import Wire
import XCTest

@testable import Cluster

/// Which task failures the coordinator retries, how often and after which wait (no cluster).
final class TaskRetryScheduleTests: XCTestCase {
    private let transient503 = TaskFailure(code: .download, message: "HTTP 503 Service Unavailable", isTransient: true)

    func testTransientFailuresAndTimeoutsAreRetriedPermanentOnesAreNot() {
        XCTAssertTrue(TaskRetrySchedule.isRetryable(transient503))
        XCTAssertTrue(
            TaskRetrySchedule.isRetryable(TaskFailure(code: .timedOut, message: "timed out", isTransient: true)))
        XCTAssertTrue(
            TaskRetrySchedule.isRetryable(TaskFailure(code: .timedOut, message: "timed out")),
            "a timeout is the coordinator's own verdict: retried whatever the flag")
        XCTAssertFalse(
            TaskRetrySchedule.isRetryable(TaskFailure(code: .download, message: "HTTP 404 Not Found")),
            "a 4xx is not marked transient by the worker")
        for code in [FailureCode.decode, .limit, .cancelled, .internal, .dependency, .inputMissing] {
            XCTAssertFalse(
                TaskRetrySchedule.isRetryable(TaskFailure(code: code, message: "x", isTransient: true)),
                "\(code) is permanent even when a peer marks it transient")
        }
        XCTAssertFalse(
            TaskRetrySchedule.isRetryable(TaskFailure(code: .unspecified, message: "old worker")),
            "a worker that sends no class is not retried")
    }

    func testAWorkerLossIsATransientAttemptAndThreeLossesFailTheTask() {
        let lost = TaskFailure(
            code: .workerLost, message: "http://x/a.jpg: worker lost: its download was on worker w-1, which died",
            isTransient: true)
        XCTAssertTrue(TaskRetrySchedule.isRetryable(lost))
        XCTAssertTrue(
            TaskRetrySchedule.isRetryable(TaskFailure(code: .workerLost, message: "x")), "the coordinator's own verdict"
        )
        let one = TaskRetrySchedule(retries: 1)
        guard case .retry = one.decide(after: lost, attempt: 1, fraction: 0.5, workerLosses: 1) else {
            return XCTFail("a first loss is retried")
        }
        XCTAssertEqual(
            one.decide(after: lost, attempt: 2, fraction: 0.5, workerLosses: 2), .fail, "it counts against --retries")
        let ten = TaskRetrySchedule(retries: 10)
        guard case .retry = ten.decide(after: lost, attempt: 3, fraction: 0.5, workerLosses: 2) else {
            return XCTFail("2 losses")
        }
        XCTAssertEqual(
            ten.decide(after: lost, attempt: 3, fraction: 0.5, workerLosses: TaskRetrySchedule.maxWorkerLosses), .fail,
            "an input that kills its workers does not kill more, whatever the retries")
        guard case .retry = ten.decide(after: transient503, attempt: 4, fraction: 0.5, workerLosses: 3) else {
            return XCTFail("other failures are not capped by losses")
        }
        let final = TaskRetrySchedule.finalFailure(lost, workerLosses: 2)
        XCTAssertEqual(final.code, .workerLost)
        XCTAssertTrue(final.message.hasPrefix("worker lost 2 times"), final.message)
        XCTAssertTrue(final.message.contains("w-1"), final.message)
        XCTAssertEqual(
            TaskRetrySchedule.finalFailure(transient503, workerLosses: 2), transient503, "other causes unchanged")
    }

    func testATaskGetsRetriesPlusOneAttempts() {
        let schedule = TaskRetrySchedule(retries: 2)
        guard case .retry = schedule.decide(after: transient503, attempt: 1, fraction: 0.5),
            case .retry = schedule.decide(after: transient503, attempt: 2, fraction: 0.5)
        else { return XCTFail("attempts 1 and 2 are retried") }
        XCTAssertEqual(
            schedule.decide(after: transient503, attempt: 3, fraction: 0.5), .fail, "the third attempt is the last")
        XCTAssertEqual(TaskRetrySchedule(retries: 0).decide(after: transient503, attempt: 1, fraction: 0.5), .fail)
        XCTAssertEqual(
            schedule.decide(after: TaskFailure(code: .download, message: "HTTP 404"), attempt: 1, fraction: 0.5), .fail)
    }

    func testBackoffIsExponentialWithFullJitterAndCapped() {
        let schedule = TaskRetrySchedule(retries: 10)
        let initial = TaskRetrySchedule.initialDelay
        XCTAssertEqual(schedule.decide(after: transient503, attempt: 1, fraction: 1), .retry(after: initial))
        XCTAssertEqual(schedule.decide(after: transient503, attempt: 3, fraction: 1), .retry(after: initial * 4))
        XCTAssertEqual(schedule.decide(after: transient503, attempt: 3, fraction: 0.5), .retry(after: initial * 2))
        XCTAssertEqual(
            schedule.decide(after: transient503, attempt: 2, fraction: 0), .retry(after: .zero),
            "full jitter may retry at once")
        XCTAssertEqual(
            schedule.decide(after: transient503, attempt: 10, fraction: 1), .retry(after: TaskRetrySchedule.maxBackoff))
    }

    func testRetryAfterIsHonouredAndClamped() {
        let schedule = TaskRetrySchedule(retries: 2)
        var asked = transient503
        asked.retryAfterMs = 7_000
        XCTAssertEqual(
            schedule.decide(after: asked, attempt: 1, fraction: 0.5), .retry(after: .seconds(7)),
            "a Retry-After longer than the backoff is waited")
        asked.retryAfterMs = 1
        XCTAssertEqual(
            schedule.decide(after: asked, attempt: 1, fraction: 1), .retry(after: TaskRetrySchedule.initialDelay),
            "a shorter one (or one in the past: 0) leaves the backoff")
        asked.retryAfterMs = UInt32.max
        XCTAssertEqual(
            schedule.decide(after: asked, attempt: 1, fraction: 0.5), .retry(after: RetryAfterClamp.longest),
            "one absurdly far away is cut to 5 minutes")
        XCTAssertEqual(RetryAfterClamp.milliseconds(.seconds(-5)), 0, "a wait in the past is no wait")
        XCTAssertEqual(RetryAfterClamp.milliseconds(.seconds(86_400 * 365)), 300_000)
    }

    func testRetriesOutsideTheRangeAreRefusedNamingIt() {
        XCTAssertNil(TaskRetrySchedule.problem(retries: nil))
        XCTAssertNil(TaskRetrySchedule.problem(retries: 0))
        XCTAssertNil(TaskRetrySchedule.problem(retries: 10))
        XCTAssertEqual(TaskRetrySchedule.problem(retries: 11), "retries must be between 0 and 10 (got 11)")
        XCTAssertEqual(
            Int(TaskRetrySchedule(SubmitBatch(requestID: "r", items: [])).retries), TaskRetrySchedule.defaultRetries)
        XCTAssertEqual(TaskRetrySchedule(SubmitBatch(requestID: "r", items: [], retries: 0)).retries, 0)
    }

    func testTheRegistryRefusesBadRetriesAndDeadlines() {
        let registry = BatchRegistry(
            limits: .init(maxBatchItems: 10, maxPendingItemsPerClient: 10), keepsResults: false)
        let client = PeerIdentity(Array("c".utf8))
        let items = [BatchItem(source: "http://x/a.jpg")]
        let tooMany = registry.refusal(of: SubmitBatch(requestID: "r", items: items, retries: 99), from: client)
        XCTAssertEqual(tooMany?.code, .invalidRequest)
        XCTAssertEqual(tooMany?.reason, "retries must be between 0 and 10 (got 99)")
        let farDeadline = registry.refusal(
            of: SubmitBatch(requestID: "r", items: items, deadlineSeconds: .max), from: client)
        XCTAssertEqual(farDeadline?.code, .invalidRequest)
        XCTAssertTrue(farDeadline?.reason.contains("between 1 and 2592000 seconds") == true, farDeadline?.reason ?? "")
        XCTAssertNil(
            registry.refusal(
                of: SubmitBatch(requestID: "r", items: items, retries: 3, deadlineSeconds: 60), from: client))
    }
}
