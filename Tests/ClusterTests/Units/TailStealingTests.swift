import Wire
import XCTest

@testable import Cluster

/// Work stealing at a batch's tail as pure state (`Dispatcher+Stealing`): who is asked for which task and
/// when, and that a task runs on exactly one worker whatever the order of results, answers, heartbeats,
/// cancels and losses.
final class TailStealingTests: XCTestCase {
    private let a = PeerIdentity(Array("a".utf8))
    private let b = PeerIdentity(Array("b".utf8))
    private let now = ContinuousClock.now

    private func task(_ key: TaskKey) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(key)/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift, source: "http://x/\(key).jpg",
            inputs: [InjectedInput(fromTaskID: "b/\(key)/download", data: [0xFF, 0xD8, 0xFF])], taskKey: key)
    }

    private func hello(_ id: String, giveBackThreads: UInt32 = 1) -> WorkerHello {
        WorkerHello(workerID: id, slots: 2, acceptsBatches: true, giveBackThreads: giveBackThreads)
    }

    private func assignments(_ out: [Outbound]) -> [(peer: PeerIdentity, assignment: TaskAssignment)] {
        out.compactMap { if case .taskAssignment(let assignment) = $0.message { ($0.peer, assignment) } else { nil } }
    }

    private func asks(_ out: [Outbound]) -> [(peer: PeerIdentity, ask: GiveBackTask)] {
        out.compactMap { if case .giveBackTask(let ask) = $0.message { ($0.peer, ask) } else { nil } }
    }

    private func succeeded(_ assignment: TaskAssignment) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(TaskOutput(data: [1])),
            taskKey: assignment.taskKey)
    }

    /// Two workers of one compute thread and two slots; three tasks: one worker gets two (one waits behind
    /// its compute thread), the other one. Returns the dispatcher, the busier worker with its two tasks (the
    /// waiting one last), and the other worker with its task.
    private func tail(
        giveBackB: UInt32 = 1
    ) -> (
        Dispatcher, busy: PeerIdentity, busyTasks: [TaskAssignment],
        idle: PeerIdentity, idleTask: TaskAssignment
    ) {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(hello("a"), peer: a, now: now)
        _ = dispatcher.register(hello("b", giveBackThreads: giveBackB), peer: b, now: now)
        var sent: [(peer: PeerIdentity, assignment: TaskAssignment)] = []
        for key: TaskKey in [10, 20, 30] {
            let out = dispatcher.enqueue(task(key))
            XCTAssertTrue(asks(out).isEmpty, "nobody is asked while tasks wait or run one per thread")
            sent += assignments(out)
        }
        XCTAssertEqual(sent.count, 3)
        let busy = sent.filter { $0.peer == a }.count == 2 ? a : b
        let idle = busy == a ? b : a
        return (
            dispatcher, busy, sent.filter { $0.peer == busy }.map(\.assignment),
            idle, sent.first { $0.peer == idle }!.assignment
        )
    }

    func testAnIdleWorkerGetsTheTaskWaitingOnAnotherOnceItIsGivenBackAndALateResultOfTheOldAttemptIsStale() throws {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        let out = dispatcher.complete(succeeded(idleTask), from: idle, now: now).1
        let asked = asks(out)
        XCTAssertEqual(asked.count, 1, "one idle compute thread, one ask: \(out)")
        XCTAssertEqual(asked.first?.peer, busy)
        XCTAssertEqual(
            asked.first?.ask, GiveBackTask(taskKey: waiting.taskKey, attempt: waiting.attempt),
            "the most recently assigned task, the one that waits")
        XCTAssertTrue(asks(dispatcher.dispatch()).isEmpty, "not asked twice while the answer is on its way")

        let again = assignments(
            dispatcher.givenBack(
                TaskGivenBack(taskKey: waiting.taskKey, attempt: waiting.attempt, givenBack: true),
                from: busy, now: now))
        XCTAssertEqual(again.count, 1)
        XCTAssertEqual(again.first?.peer, idle, "assigned again to the idle worker")
        XCTAssertEqual(
            again.first?.assignment.attempt, waiting.attempt + 1, "a new attempt: the old one's answers are stale")
        XCTAssertEqual(dispatcher.stealing.givenBackCount, 1)
        XCTAssertTrue(dispatcher.workerLosses.isEmpty, "giving back costs no attempt of the batch's retries")

        let stale = dispatcher.staleResults
        XCTAssertNil(
            dispatcher.complete(succeeded(waiting), from: busy, now: now).0, "the old attempt's result is not delivered"
        )
        XCTAssertEqual(dispatcher.staleResults, stale + 1)
        let current = try XCTUnwrap(again.first?.assignment)
        XCTAssertNotNil(dispatcher.complete(succeeded(current), from: idle, now: now).0, "the new attempt's is, once")
        XCTAssertEqual(dispatcher.runningTaskCount, 1, "only the busy worker's first task still runs")
    }

    func testAStartedTaskStaysAndIsNeverAskedForAgain() {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        _ = dispatcher.complete(succeeded(idleTask), from: idle, now: now)
        let out = dispatcher.givenBack(
            TaskGivenBack(taskKey: waiting.taskKey, attempt: waiting.attempt, givenBack: false), from: busy, now: now)
        XCTAssertTrue(out.isEmpty)
        XCTAssertEqual(dispatcher.state(of: waiting.taskKey), .running(worker: busy))
        let later = dispatcher.heartbeat(
            Heartbeat(
                workerID: "x", lastSequence: dispatcher.lastSequence,
                holding: busyTasks.map(\.taskKey)), from: busy, now: now
        ).out
        XCTAssertTrue(
            asks(later).isEmpty && asks(dispatcher.dispatch()).isEmpty, "a started task is not asked for again")
        XCTAssertNotNil(dispatcher.complete(succeeded(waiting), from: busy, now: now).0, "its result counts")
    }

    func testAResultThatCrossesTheAskAnswersTheTaskAndTheAnswerAfterItChangesNothing() {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        _ = dispatcher.complete(succeeded(idleTask), from: idle, now: now)
        XCTAssertNotNil(
            dispatcher.complete(succeeded(waiting), from: busy, now: now).0, "finished before the ask arrived")
        for givenBack in [false, true] {
            let out = dispatcher.givenBack(
                TaskGivenBack(taskKey: waiting.taskKey, attempt: waiting.attempt, givenBack: givenBack),
                from: busy, now: now)
            XCTAssertTrue(assignments(out).isEmpty, "a finished task is never assigned again")
        }
        XCTAssertNil(dispatcher.state(of: waiting.taskKey))
    }

    func testALostAnswerIsReadFromTheNextHeartbeatWithoutLosingAnAttempt() {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        _ = dispatcher.complete(succeeded(idleTask), from: idle, now: now)
        // The worker gave it back; its answer was lost. Its heartbeat holds only the first task.
        let out = dispatcher.heartbeat(
            Heartbeat(
                workerID: "x", lastSequence: dispatcher.lastSequence,
                holding: [busyTasks[0].taskKey]), from: busy, now: now
        ).out
        XCTAssertEqual(assignments(out).map(\.peer), [idle])
        XCTAssertEqual(assignments(out).first?.assignment.taskKey, waiting.taskKey)
        XCTAssertTrue(dispatcher.takeWorkerLosses().isEmpty, "not a lost delivery: it was asked back")
        XCTAssertEqual(dispatcher.lostDeliveries, 0)
    }

    func testACancelledTaskGivenBackIsConfirmedAndNotAssignedAgain() {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        _ = dispatcher.complete(succeeded(idleTask), from: idle, now: now)
        XCTAssertEqual(dispatcher.cancel(key: waiting.taskKey, reason: "cancelled").count, 1)
        let out = dispatcher.givenBack(
            TaskGivenBack(taskKey: waiting.taskKey, attempt: waiting.attempt, givenBack: true), from: busy, now: now)
        XCTAssertTrue(assignments(out).isEmpty)
        XCTAssertNil(dispatcher.state(of: waiting.taskKey), "the cancel is confirmed")
        XCTAssertEqual(dispatcher.workers[busy]?.running.count, 1, "its slot is free")
    }

    func testAWorkerLostAfterTheAskLosesTheAttemptAsUsualAndItsLateAnswerIsStale() {
        var (dispatcher, busy, busyTasks, idle, idleTask) = tail()
        let waiting = busyTasks[1]
        _ = dispatcher.complete(succeeded(idleTask), from: idle, now: now)
        _ = dispatcher.workerUnreachable(busy)
        XCTAssertEqual(Set(dispatcher.takeWorkerLosses().map(\.result.taskKey)), Set(busyTasks.map(\.taskKey)))
        let out = dispatcher.givenBack(
            TaskGivenBack(taskKey: waiting.taskKey, attempt: waiting.attempt, givenBack: true), from: busy, now: now)
        XCTAssertTrue(out.isEmpty)
    }

    func testAnOlderWorkerIsNeverAskedNorCountedAsIdle() {
        var (dispatcher, _, _, idle, idleTask) = tail(giveBackB: 0)
        if idle == b {
            XCTAssertTrue(
                asks(dispatcher.complete(succeeded(idleTask), from: idle, now: now).1).isEmpty,
                "an idle worker that does not announce give-back does not steal")
        } else {
            XCTAssertTrue(
                asks(dispatcher.complete(succeeded(idleTask), from: idle, now: now).1).isEmpty,
                "a busy worker that does not announce give-back is never asked")
        }
    }

    func testNobodyIsAskedWhileTasksWaitToBeAssigned() {
        var (dispatcher, busy, _, idle, idleTask) = tail()
        var queued = task(40)
        queued.attempt = 1
        // Fill every slot, then one more waits in the queue.
        _ = dispatcher.enqueue(queued)
        _ = dispatcher.enqueue(task(50))
        let out = dispatcher.complete(succeeded(idleTask), from: idle, now: now).1
        XCTAssertTrue(asks(out).isEmpty, "the freed slot takes the queued task: \(out)")
        XCTAssertEqual(assignments(out).count, 1)
        _ = busy
    }

    func testAChainedTiltShiftGivenBackRunsItsDownloadAgainElsewhere() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        var helloA = hello("a")
        helloA.acceptsChainedTasks = true
        _ = dispatcher.register(helloA, peer: a, now: now)
        // Only a: two chained photos go there, the second waits behind the first's filter.
        var followOns: [TaskAssignment] = []
        for key: TaskKey in [100, 200] {
            var download = TaskAssignment(
                taskID: "b/\(key)/download", batchID: "b", attempt: 1, kind: .download,
                source: "http://x/\(key).jpg", taskKey: key)
            download.keepOutput = true
            var followOn = task(key + 1)
            followOn.inputs = [InjectedInput(fromTaskID: download.taskID, data: [], onWorker: true)]
            followOns.append(followOn)
            let out = dispatcher.enqueue(download, dependentKey: key + 1, followOn: followOn)
            XCTAssertEqual(assignments(out).count, 1)
            let result = TaskResult(
                taskID: download.taskID, attempt: 1,
                outcome: .output(
                    TaskOutput(
                        heldOnWorker: true, size: 3,
                        mediaType: "image/jpeg")), taskKey: key)
            _ = dispatcher.complete(result, from: a, now: now)
            XCTAssertTrue(dispatcher.chained.requested(key + 1), "adopted: it runs on a")
        }
        XCTAssertEqual(dispatcher.workers[a]?.running, [101, 201])
        // b joins idle: a's waiting follow-on (the newest) is asked back.
        let asked = asks(dispatcher.register(hello("b"), peer: b, now: now))
        XCTAssertEqual(asked.map(\.peer), [a])
        XCTAssertEqual(asked.first?.ask.taskKey, 201)
        _ = dispatcher.givenBack(TaskGivenBack(taskKey: 201, attempt: 1, givenBack: true), from: a, now: now)
        let lost = dispatcher.takeLostInputs()
        XCTAssertEqual(
            lost.map(\.taskKey), [201], "its image is on a: it fails as input missing, and its download runs again")
        guard case .failure(let failure) = lost.first?.outcome else { return XCTFail("expected a failure") }
        XCTAssertEqual(failure.code, .inputMissing)
        XCTAssertEqual(dispatcher.workers[a]?.running, [101], "a's slot is free")
        XCTAssertTrue(
            asks(dispatcher.dispatch()).isEmpty, "b's idle thread waits for that download: nobody else is asked")
        // The re-run download comes (its operation's request), and goes to b.
        var rerun = TaskAssignment(
            taskID: "b/200/download", batchID: "b", attempt: 101, kind: .download,
            source: "http://x/200.jpg", taskKey: 200)
        rerun.keepOutput = true
        let sent = assignments(dispatcher.enqueue(rerun, dependentKey: 201, followOn: followOns[1]))
        XCTAssertEqual(sent.map(\.peer), [b])
        XCTAssertTrue(dispatcher.stealing.rerunsDue.isEmpty)
    }

    func testARerunThatNeverComesStopsCountingAfterAWhile() {
        var stealing = TailStealing()
        let then = ContinuousClock.now
        stealing.rerunsDue[7] = TailStealing.Rerun(since: then, victim: a)
        stealing.expireReruns(now: then + .seconds(1))
        XCTAssertEqual(stealing.rerunsDue.count, 1)
        stealing.expireReruns(now: then + TailStealing.rerunWait + .seconds(1))
        XCTAssertTrue(stealing.rerunsDue.isEmpty)
    }
}
