import Wire
import XCTest

@testable import Cluster

/// Task timeouts and batch deadlines, driven with a real `Dispatcher` (no sockets).
final class TaskTimeoutsTests: XCTestCase {
    private let worker = PeerIdentity(Array("w1".utf8))
    private let start = ContinuousClock.now

    private func runningTask(_ dispatcher: inout Dispatcher, key: TaskKey) -> [Outbound] {
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 1, acceptsBatches: true), peer: worker, now: start)
        return dispatcher.enqueue(
            TaskAssignment(
                taskID: "b/0/download", batchID: "b", attempt: 1, kind: .download,
                source: "http://x/a.jpg", taskKey: key))
    }

    func testAnAttemptRunningTooLongIsCancelledAndFailsOnlyOnceItsWorkerConfirmed() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(60))
        var timeouts = TaskTimeouts(limit: .seconds(3))
        timeouts.sent(runningTask(&dispatcher, key: 7), now: start)

        XCTAssertEqual(timeouts.expire(now: start + .seconds(2), dispatcher: dispatcher), [], "within the limit")
        XCTAssertEqual(timeouts.expire(now: start + .seconds(3), dispatcher: dispatcher), [7])
        XCTAssertEqual(timeouts.expire(now: start + .seconds(9), dispatcher: dispatcher), [], "expired once")

        let cancel = dispatcher.cancel(key: 7, reason: "timed out after 3 s")
        XCTAssertEqual(cancel.count, 1, "the worker is told to cancel it")
        XCTAssertTrue(timeouts.settle(dispatcher: dispatcher).isEmpty, "not failed before the worker confirms")

        let confirmation = TaskResult(
            taskID: "b/0/download", attempt: 1,
            outcome: .failure(TaskFailure(code: .cancelled)), taskKey: 7)
        let (delivered, _) = dispatcher.complete(confirmation, from: worker, now: start + .seconds(4))
        XCTAssertNil(delivered, "the confirmation is nobody's result")
        let settled = timeouts.settle(dispatcher: dispatcher)
        XCTAssertEqual(settled.map(\.key), [7])
        XCTAssertEqual(
            settled.first?.timedOut, TaskTimeouts.TimedOut(attempt: 1, worker: worker, source: "http://x/a.jpg"))
        let failure = timeouts.failure(settled[0].timedOut, workerID: "w1")
        XCTAssertEqual(failure.code, .timedOut)
        XCTAssertTrue(failure.isTransient)
        XCTAssertTrue(failure.message.contains("timed out after 3 s"), failure.message)
        XCTAssertTrue(timeouts.settle(dispatcher: dispatcher).isEmpty, "settled once")
    }

    func testAnAttemptThatFinishedInTimeIsLetGo() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(60))
        var timeouts = TaskTimeouts(limit: .seconds(3))
        timeouts.sent(runningTask(&dispatcher, key: 7), now: start)
        _ = dispatcher.complete(
            TaskResult(taskID: "b/0/download", attempt: 1, outcome: .output(TaskOutput(data: [1])), taskKey: 7),
            from: worker, now: start + .seconds(1))
        XCTAssertEqual(timeouts.expire(now: start + .seconds(10), dispatcher: dispatcher), [])
        XCTAssertTrue(timeouts.timingOut.isEmpty)
    }

    /// An answered attempt leaves the table at once, so the tick scans only what still runs; one still
    /// running past the limit is expired all the same.
    func testAnAnsweredAttemptStopsItsClockAtOnceAndTheOthersStillExpire() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(60))
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: start)
        var timeouts = TaskTimeouts(limit: .seconds(3))
        for key: TaskKey in [7, 8] {
            timeouts.sent(
                dispatcher.enqueue(
                    TaskAssignment(
                        taskID: "b/\(key)/download", batchID: "b", attempt: 1,
                        kind: .download, source: "http://x/\(key).jpg", taskKey: key)),
                now: start)
        }
        XCTAssertEqual(timeouts.watchedCount, 2)
        let (delivered, _) = dispatcher.complete(
            TaskResult(taskID: "b/7/download", attempt: 1, outcome: .output(TaskOutput(data: [1])), taskKey: 7),
            from: worker, now: start + .seconds(1))
        XCTAssertNotNil(delivered)
        timeouts.finished(7)
        XCTAssertEqual(timeouts.watchedCount, 1, "the answered attempt is no longer watched, before any tick")
        XCTAssertEqual(
            timeouts.expire(now: start + .seconds(4), dispatcher: dispatcher), [8], "the other one still times out")
    }

    func testARestoredBatchsDeadlineCountsFromItsSubmitNotFromTheRestart() {
        var deadlines = BatchDeadlines()
        let accepted: UInt64 = 1_795_000_000_000
        // Accepted 40 s before the restart with a 60 s deadline: 20 s are left.
        deadlines.set(
            "b-1", seconds: 60, acceptedUnixMilliseconds: accepted, nowUnixMilliseconds: accepted + 40_000, now: start)
        // Past its deadline while the coordinator was down: due at once.
        deadlines.set(
            "b-2", seconds: 10, acceptedUnixMilliseconds: accepted, nowUnixMilliseconds: accepted + 40_000, now: start)
        // The wall clock was set back: counted from now, never more than its deadline.
        deadlines.set(
            "b-3", seconds: 30, acceptedUnixMilliseconds: accepted + 90_000, nowUnixMilliseconds: accepted, now: start)
        XCTAssertEqual(deadlines.expired(now: start).map(\.batchID), ["b-2"])
        XCTAssertTrue(deadlines.expired(now: start + .seconds(19)).isEmpty)
        XCTAssertEqual(deadlines.expired(now: start + .seconds(20)).map(\.batchID), ["b-1"])
        XCTAssertEqual(deadlines.expired(now: start + .seconds(30)).map(\.batchID), ["b-3"])
    }

    func testBatchDeadlinesFireOnceAtTheirTime() {
        var deadlines = BatchDeadlines()
        deadlines.set("b-1", seconds: 5, from: start)
        deadlines.set("b-2", seconds: 0, from: start)
        XCTAssertTrue(deadlines.expired(now: start + .seconds(4)).isEmpty)
        let due = deadlines.expired(now: start + .seconds(5))
        XCTAssertEqual(due.map(\.batchID), ["b-1"], "a deadline of 0 is none")
        XCTAssertEqual(due.first?.seconds, 5)
        XCTAssertTrue(deadlines.expired(now: start + .seconds(50)).isEmpty)
        XCTAssertEqual(
            BatchDeadlineError(seconds: 5).description,
            "cancelled: the batch's deadline of 5 s passed (submit --deadline)")
        XCTAssertNil(BatchDeadlines.problem(seconds: 0))
        XCTAssertNotNil(BatchDeadlines.problem(seconds: 2_592_001))
    }

    func testARetryPassesOverTheWorkerWhereItFailedWhenAnotherIsFree() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(60))
        let other = PeerIdentity(Array("w2".utf8))
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 4, acceptsBatches: true), peer: worker, now: start)
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 1, acceptsBatches: true), peer: other, now: start)
        let out = dispatcher.enqueue(
            TaskAssignment(taskID: "t", batchID: "b", attempt: 2, kind: .download, taskKey: 9),
            avoiding: worker)
        XCTAssertEqual(out.map(\.peer), [other], "w1 has more free slots, but the last attempt failed there")
        let alone = dispatcher.enqueue(
            TaskAssignment(taskID: "u", batchID: "b", attempt: 2, kind: .download, taskKey: 11),
            avoiding: worker)
        XCTAssertEqual(alone.map(\.peer), [worker], "with no other worker free, it goes where it failed")
    }
}
