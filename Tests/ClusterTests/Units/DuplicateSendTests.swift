import Wire
import XCTest

@testable import Cluster

/// Tasks sent twice (issue #14's duplicates under load), as orders of events on the coordinator's state
/// machines, no sockets: a task whose result is on its way or waiting unread is not sent again, and every
/// re-send there still is gets counted with its reason (`TaskResends`).
final class DuplicateSendTests: XCTestCase {
    private let worker = PeerIdentity(Array("w1".utf8))
    private let start = ContinuousClock.now

    private func registered(slots: UInt32 = 2) -> Dispatcher {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(
            WorkerHello(workerID: "w1", slots: slots, acceptsBatches: true), peer: worker, now: start)
        return dispatcher
    }

    private func noop(_ key: TaskKey, attempt: UInt32 = 1) -> TaskAssignment {
        TaskAssignment(taskID: "b/\(key)", batchID: "b", attempt: attempt, kind: .noop, taskKey: key)
    }

    private func answer(_ assignment: TaskAssignment) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(TaskOutput(data: [])),
            taskKey: assignment.taskKey)
    }

    private func assignments(_ out: [Outbound]) -> [TaskAssignment] {
        out.compactMap { if case .taskAssignment(let a) = $0.message { a } else { nil } }
    }

    /// An order the simulated workers of `ClusterBenchmark` can produce (they read new assignments right
    /// after sending their results, and a heartbeat due then goes before those answers): the worker reads
    /// an assignment, sends a heartbeat that reports its sequence without holding it (the answer is made but
    /// not sent yet), then the result. Taken as lost at that heartbeat, the task was sent again (its
    /// operation's retry) and the result that followed was stale: the task ran twice.
    func testAResultSentJustAfterAHeartbeatIsTakenAndTheTaskNotSentAgain() {
        var dispatcher = registered()
        let sent = assignments(dispatcher.enqueue(noop(1)))
        XCTAssertEqual(sent.map(\.sequence), [1])

        let (lost, out) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 1, holding: []), from: worker, now: start)
        XCTAssertEqual(lost, 0, "one heartbeat that misses it may be ahead of its result")
        XCTAssertTrue(out.isEmpty)
        XCTAssertTrue(dispatcher.takeWorkerLosses().isEmpty, "nothing for its operation to retry")

        let (result, _) = dispatcher.complete(answer(sent[0]), from: worker, now: start)
        XCTAssertEqual(result?.taskKey, 1, "the result is the task's, not a stale one")
        XCTAssertEqual(dispatcher.staleResults, 0)
        let (later, _) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 1, holding: []), from: worker, now: start)
        XCTAssertEqual(later, 0)
        XCTAssertEqual(dispatcher.lostDeliveries, 0)
        XCTAssertEqual(dispatcher.resends.total, 0)
    }

    /// A real loss is still found, one heartbeat later: missing from two heartbeats that both report its
    /// sequence received. A heartbeat that holds it again in between (it was being answered) resets nothing
    /// it should not: a held task is never lost.
    func testAnAssignmentMissingFromTwoHeartbeatsInARowIsLost() {
        var dispatcher = registered()
        _ = dispatcher.enqueue(noop(1))
        _ = dispatcher.enqueue(noop(2))
        for _ in 0..<3 {
            let (lost, _) = dispatcher.heartbeat(
                Heartbeat(workerID: "w1", lastSequence: 2, holding: [1, 2]), from: worker, now: start)
            XCTAssertEqual(lost, 0, "held")
        }
        XCTAssertEqual(
            dispatcher.heartbeat(Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker, now: start)
                .lost, 0)
        XCTAssertEqual(
            dispatcher.heartbeat(Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker, now: start)
                .lost, 1)
        let losses = dispatcher.takeWorkerLosses()
        XCTAssertEqual(losses.map(\.result.taskKey), [1])
        XCTAssertEqual(losses.map(\.reason), [.assignmentLost])
        XCTAssertEqual(dispatcher.workers[worker]?.running, [2], "its slot is free")

        // Its retry, sent again, starts with a clean slate: one heartbeat missing it is not enough.
        let retry = assignments(dispatcher.enqueue(noop(1, attempt: 2)))
        XCTAssertEqual(retry.map(\.sequence), [3])
        XCTAssertEqual(
            dispatcher.heartbeat(Heartbeat(workerID: "w1", lastSequence: 3, holding: [2]), from: worker, now: start)
                .lost, 0)
        XCTAssertNotNil(dispatcher.complete(answer(retry[0]), from: worker, now: start).0)
    }

    /// The task timeout is judged as the liveness check is (`LivenessCheckpoint`): a result that waited
    /// unread in the socket when the timer fired past the limit is handled first, and the task is neither
    /// cancelled nor sent again; one still unanswered then is timed out.
    func testAResultWaitingUnreadAtTheTickIsTakenNotTimedOut() {
        var dispatcher = registered()
        var timeouts = TaskTimeouts(limit: .seconds(3))
        var checkpoint = LivenessCheckpoint()
        let answered = assignments(dispatcher.enqueue(noop(1)))
        let hung = assignments(dispatcher.enqueue(noop(2)))
        timeouts.sent((answered + hung).map { Outbound(peer: worker, message: .taskAssignment($0)) }, now: start)

        // At start + 4 s the result of task 1 waits unread: judged now, both would time out.
        XCTAssertNil(checkpoint.timerFired(caughtUp: false, now: start + .seconds(4)))
        let (result, _) = dispatcher.complete(answer(answered[0]), from: worker, now: start + .seconds(5))
        XCTAssertNotNil(result)
        timeouts.finished(1)
        guard let instant = checkpoint.handledMessages(caughtUp: true) else {
            return XCTFail("the check runs once caught up")
        }
        XCTAssertEqual(timeouts.expire(now: instant, dispatcher: dispatcher), [2], "only the task without a result")
    }

    /// Every way a task runs again is counted, with its reason.
    func testEveryResendIsCountedWithItsReason() {
        // A leaving worker hands back a task it never reported receiving: queued again, no attempt counted.
        var dispatcher = registered(slots: 1)
        _ = dispatcher.enqueue(noop(1))
        _ = dispatcher.workerLeft(worker, draining: false)
        XCTAssertEqual(dispatcher.resends[.handedBack], 1)

        // A worker that no longer had an input sent by reference gets the bytes: `LocalityTests`.

        // The retries of remote operations carry the reason of the attempt that failed.
        let lostWorker = PeerIdentity(Array("w9".utf8))
        func retried(_ code: FailureCode, lossReason: TaskResends.Reason? = nil) -> TaskResends.Reason? {
            var run = RemoteRun(assignment: noop(5), lineage: nil, attempt: 1, workerLosses: 0)
            XCTAssertNil(run.request.resend, "a first run is no re-send")
            let error = RemoteTaskError(
                failure: TaskFailure(code: code, message: "\(code)"), attempt: 1,
                worker: lostWorker, lossReason: lossReason)
            return run.retry(after: error).resend
        }
        XCTAssertEqual(retried(.workerLost, lossReason: .assignmentLost), .assignmentLost)
        XCTAssertEqual(retried(.workerLost, lossReason: .workerLost), .workerLost)
        XCTAssertEqual(retried(.timedOut), .timedOut)
        XCTAssertEqual(retried(.download), .failed)
        XCTAssertEqual(retried(.inputMissing), .inputMissing)

        // A lineage re-run of the producer is an input gone missing.
        let producer = TaskAssignment(
            taskID: "b/0/download", batchID: "b", attempt: 1, kind: .download,
            source: "http://x/a.jpg", taskKey: 20)
        var lineageRun = RemoteRun(
            assignment: noop(21), lineage: Lineage(producer: producer), attempt: 1, workerLosses: 0)
        guard
            case .send(let rerun) = lineageRun.step(
                after: .failure(
                    RemoteTaskError(
                        failure: TaskFailure(code: .inputMissing, message: "gone"), attempt: 1)))
        else { return XCTFail("the producer runs again") }
        XCTAssertEqual(rerun.resend, .inputMissing)
    }
}

extension DuplicateSendTests {
    /// A coordinator behind on its messages handles a backlog of a worker's heartbeats in a burst, all sent
    /// before it sent the worker a new assignment: they do not add up to `heartbeatsBeforeLost`. Heartbeats
    /// handled a heartbeat interval apart still find an assignment that never arrived.
    func testABurstOfBackloggedHeartbeatsDoesNotMakeAnAssignmentLost() {
        var dispatcher = registered()
        let sent = assignments(dispatcher.enqueue(noop(1)))
        XCTAssertEqual(sent.map(\.sequence), [1])
        // Five heartbeats the worker sent before the assignment existed, handled one after the other.
        for _ in 0..<Dispatcher.heartbeatsBeforeLost {
            let (lost, out) = dispatcher.heartbeat(
                Heartbeat(workerID: "w1", lastSequence: 0, holding: []), from: worker, now: start)
            XCTAssertTrue(lost == 0 && out.isEmpty, "a burst counts once")
        }
        XCTAssertEqual(dispatcher.state(of: 1), .running(worker: worker))

        // Then the worker's heartbeats a second apart, none showing it: the assignment never arrived.
        var lost = 0
        var second = 0
        while lost == 0, second < 2 * Dispatcher.heartbeatsBeforeLost {
            second += 1
            lost =
                dispatcher.heartbeat(
                    Heartbeat(workerID: "w1", lastSequence: 0, holding: []), from: worker,
                    now: start + .seconds(second)
                ).lost
        }
        XCTAssertEqual(lost, 1)
        XCTAssertEqual(second, Dispatcher.heartbeatsBeforeLost - 1, "the burst counted as one heartbeat")
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.reason), [.assignmentLost])
    }
}
