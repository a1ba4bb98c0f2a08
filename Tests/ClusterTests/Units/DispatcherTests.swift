import Wire
import XCTest

@testable import Cluster

/// The dispatch rules, driven directly (no sockets).
final class DispatcherTests: XCTestCase {
    private let worker = PeerIdentity(Array("w1".utf8))
    private let other = PeerIdentity(Array("w2".utf8))
    private let now = ContinuousClock.now

    private func makeDispatcher() -> Dispatcher {
        Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
    }

    private func assignments(_ out: [Outbound]) -> [TaskAssignment] {
        out.compactMap { if case .taskAssignment(let a) = $0.message { return a } else { return nil } }
    }

    private func task(_ id: String) -> TaskAssignment {
        TaskAssignment(taskID: id, batchID: "b", attempt: 1, kind: .download, source: "http://x/\(id).jpg")
    }

    func testAWorkerIsSentAtMostItsSlotsAndASlotFreesOnlyWithItsResult() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2), peer: worker, now: now)
        var sent: [TaskAssignment] = []
        for index in 0..<5 { sent += assignments(dispatcher.enqueue(task("t\(index)"))) }
        XCTAssertEqual(sent.map(\.taskID), ["t0", "t1"], "a worker with 2 slots holds 2 tasks")
        XCTAssertEqual(dispatcher.queuedTaskCount, 3)

        let (result, out) = dispatcher.complete(
            TaskResult(taskID: "t0", attempt: 1, outcome: .output(TaskOutput(data: [1]))), from: worker, now: now)
        XCTAssertEqual(result?.taskID, "t0")
        XCTAssertEqual(assignments(out).map(\.taskID), ["t2"], "one slot freed, one task sent")
    }

    func testAHelloWithAbsurdSlotsIsRefusedAndRegistersNothing() {
        var dispatcher = makeDispatcher()
        for slots in [UInt32(PeerInputRules.maxWorkerSlots) + 1, UInt32.max] {
            let out = dispatcher.register(WorkerHello(workerID: "", slots: slots), peer: worker, now: now)
            guard case .refusal(let refusal)? = out.first?.message, out.count == 1 else { return XCTFail("\(out)") }
            XCTAssertEqual(refusal.code, .limit)
            XCTAssertTrue(refusal.reason.contains("\(slots) slots"), refusal.reason)
            XCTAssertTrue(
                refusal.reason.contains("\(PeerInputRules.maxWorkerSlots)"), "names the limit: \(refusal.reason)")
            XCTAssertTrue(dispatcher.workers.isEmpty, "a refused hello registers nothing")
        }
        let out = dispatcher.register(
            WorkerHello(workerID: "w1", slots: UInt32(PeerInputRules.maxWorkerSlots)), peer: worker, now: now)
        guard case .welcome? = out.first?.message else { return XCTFail("the limit itself is accepted: \(out)") }
        XCTAssertEqual(dispatcher.workers[worker]?.slots, PeerInputRules.maxWorkerSlots)
    }

    func testHigherPriorityTasksGoFirst() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.enqueue(task("low"), priority: 0)
        _ = dispatcher.enqueue(task("high"), priority: 1)
        let out = dispatcher.register(WorkerHello(workerID: "w1", slots: 1), peer: worker, now: now)
        XCTAssertEqual(assignments(out).map(\.taskID), ["high"])
    }

    func testCancellingARunningTaskKeepsItsSlotUntilTheWorkerConfirms() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 1), peer: worker, now: now)
        var a = task("a")
        a.taskKey = 10
        var b = task("b")
        b.taskKey = 11
        _ = dispatcher.enqueue(a)
        _ = dispatcher.enqueue(b)
        let cancel = dispatcher.cancel(key: 10, reason: "batch cancelled")
        XCTAssertEqual(
            cancel.first?.message, .cancelTask(CancelTask(taskID: "a", reason: "batch cancelled", taskKey: 10)),
            "the worker is told which task by its key")
        XCTAssertEqual(dispatcher.runningTaskCount, 1, "the slot stays taken until the worker confirms")
        XCTAssertTrue(dispatcher.cancel(key: 11, reason: "x").isEmpty, "a queued task is dropped at once")
        XCTAssertEqual(dispatcher.queuedTaskCount, 0)

        let (result, out) = dispatcher.complete(
            TaskResult(taskID: "a", attempt: 1, outcome: .failure(TaskFailure(code: .cancelled)), taskKey: 10),
            from: worker, now: now)
        XCTAssertNil(result, "nobody waits for a cancelled task")
        XCTAssertTrue(out.isEmpty)
        XCTAssertEqual(dispatcher.runningTaskCount, 0)
    }

    /// Its late failure is stale; a late success would still win while the retry runs (`LateResultTests`).
    func testADeadWorkersTaskIsLostAsAnAttemptAndItsLateFailureIsIgnored() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 1), peer: worker, now: now)
        var t = task("t")
        t.taskKey = 7
        let first = assignments(dispatcher.enqueue(t))
        XCTAssertEqual(first.map(\.attempt), [1])

        let later = now + .seconds(6)
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 1), peer: other, now: later)
        let (dead, out) = dispatcher.expireWorkers(now: later)
        XCTAssertEqual(dead, ["w1"])
        XCTAssertTrue(assignments(out).isEmpty, "not requeued silently: its operation decides")
        let losses = dispatcher.takeWorkerLosses()
        XCTAssertEqual(losses.map(\.result.taskKey), [7])
        XCTAssertEqual(losses.first?.workerID, "w1")
        XCTAssertEqual(losses.first?.result.attempt, 1, "the lost attempt")
        guard case .failure(let failure)? = losses.first?.result.outcome else { return XCTFail("expected a failure") }
        XCTAssertEqual(failure.code, .workerLost)
        XCTAssertTrue(failure.isTransient)
        XCTAssertTrue(
            failure.message.contains("worker lost") && failure.message.contains("w1")
                && failure.message.contains("died"),
            failure.message)
        XCTAssertTrue(dispatcher.takeWorkerLosses().isEmpty, "taken once")
        XCTAssertNil(dispatcher.state(of: 7), "the dispatcher let it go")

        // The operation's retry: a new attempt, to the live worker.
        t.attempt = 2
        XCTAssertEqual(assignments(dispatcher.enqueue(t)).first?.attempt, 2)
        let stale = dispatcher.staleResults
        let (late, lateOut) = dispatcher.complete(
            TaskResult(
                taskID: "t", attempt: 1, outcome: .failure(TaskFailure(code: .download, message: "HTTP 503")),
                taskKey: 7),
            from: worker, now: later)
        XCTAssertNil(late, "a late failure of an old attempt changes nothing")
        XCTAssertTrue(lateOut.isEmpty)
        XCTAssertEqual(dispatcher.staleResults, stale + 1)
        let (current, _) = dispatcher.complete(
            TaskResult(taskID: "t", attempt: 2, outcome: .output(TaskOutput(data: [2])), taskKey: 7), from: other,
            now: later)
        XCTAssertEqual(current?.attempt, 2)
    }

    func testALeavingWorkerLosesTheTasksItStartedAndHandsBackThoseItNeverReceived() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 3, acceptsBatches: true), peer: worker, now: now)
        for key: TaskKey in 1...3 {
            _ = dispatcher.enqueue(
                TaskAssignment(taskID: "t\(key)", batchID: "b", attempt: 1, kind: .noop, taskKey: key))
        }
        // Its heartbeat says it received sequences 1 and 2; the result of 2 came too. 3 is still on the way.
        _ = dispatcher.heartbeat(Heartbeat(workerID: "w1", lastSequence: 2, holding: [1, 2]), from: worker, now: now)
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 3, acceptsBatches: true), peer: other, now: now)
        _ = dispatcher.workerLeft(worker, draining: true)
        let out = dispatcher.workerLeft(worker, draining: false)
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.result.taskKey), [1, 2], "started there: attempts lost")
        XCTAssertEqual(assignments(out).map(\.taskKey), [3], "never received: handed back without an attempt lost")
        XCTAssertEqual(assignments(out).first?.attempt, 2, "as a new attempt all the same (a late result is stale)")
    }

    func testAResultTellsTheWorkerReceivedEveryEarlierAssignment() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: now)
        _ = dispatcher.enqueue(TaskAssignment(taskID: "a", batchID: "b", attempt: 1, kind: .noop, taskKey: 1))
        _ = dispatcher.enqueue(TaskAssignment(taskID: "b", batchID: "b", attempt: 1, kind: .noop, taskKey: 2))
        _ = dispatcher.complete(
            TaskResult(taskID: "b", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: 2),
            from: worker, now: now)
        _ = dispatcher.workerLeft(worker, draining: false)
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.result.taskKey), [1])
    }

    func testAnUnknownWorkersHeartbeatAsksItToRegisterAgain() {
        var dispatcher = makeDispatcher()
        let out = dispatcher.heartbeat(from: worker, now: now).out
        XCTAssertEqual(out.first?.message, .refusal(.unknownWorker))
        guard case .refusal(let refusal)? = out.first?.message else { return XCTFail("\(out)") }
        XCTAssertEqual(refusal.code, .unknownWorker, "minor 2: the worker acts on the code")
        XCTAssertEqual(
            refusal.reason, "unknown worker: send hello", "minor-1 workers match this text: it never changes")
    }

    func testAnAssignmentTheWorkerNeverGotIsALostAttempt() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: now)
        let first = assignments(
            dispatcher.enqueue(TaskAssignment(taskID: "a", batchID: "b", attempt: 1, kind: .noop, taskKey: 1)))
        let second = assignments(
            dispatcher.enqueue(TaskAssignment(taskID: "b", batchID: "b", attempt: 1, kind: .noop, taskKey: 2)))
        XCTAssertEqual(first.map(\.sequence), [1])
        XCTAssertEqual(second.map(\.sequence), [2])
        // The worker got the second (sequence 2) but holds only it: the first never arrived whole, or its
        // result is on the way behind this heartbeat; the next heartbeat, behind that result, tells.
        var (lost, out) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker, now: now)
        XCTAssertTrue(lost == 0 && out.isEmpty, "not lost at the first heartbeat that misses it")
        (lost, out) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker, now: now)
        XCTAssertEqual(lost, 1)
        XCTAssertTrue(assignments(out).isEmpty, "not sent again by the dispatcher: its operation retries it")
        var losses = dispatcher.takeWorkerLosses()
        XCTAssertEqual(losses.map(\.result.taskKey), [1])
        XCTAssertEqual(losses.map(\.reason), [.assignmentLost], "its retry is counted as such")
        if case .failure(let failure)? = losses.first?.result.outcome {
            XCTAssertEqual(failure.code, .workerLost)
            XCTAssertTrue(failure.message.contains("never received"), failure.message)
        } else {
            XCTFail("a failure is delivered")
        }
        XCTAssertEqual(dispatcher.lostDeliveries, 1)
        XCTAssertEqual(dispatcher.workers[worker]?.running, [2], "its slot is free")

        // The retry, never acknowledged: lost after `heartbeatsBeforeLost` heartbeats (a second apart) that
        // do not show it.
        _ = dispatcher.enqueue(TaskAssignment(taskID: "a", batchID: "b", attempt: 2, kind: .noop, taskKey: 1))
        for second in 1..<Dispatcher.heartbeatsBeforeLost {
            (lost, out) = dispatcher.heartbeat(
                Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker,
                now: now + .seconds(second))
            XCTAssertTrue(lost == 0 && out.isEmpty, "not lost before \(Dispatcher.heartbeatsBeforeLost) heartbeats")
        }
        (lost, _) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 2, holding: [2]), from: worker,
            now: now + .seconds(Dispatcher.heartbeatsBeforeLost))
        XCTAssertEqual(lost, 1)
        losses = dispatcher.takeWorkerLosses()
        XCTAssertEqual(losses.map(\.result.attempt), [2])
    }

    func testAHeldTaskOrOneAnsweredIsNeverTakenForLost() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: now)
        _ = dispatcher.enqueue(TaskAssignment(taskID: "a", batchID: "b", attempt: 1, kind: .noop, taskKey: 1))
        for _ in 0..<10 {
            let (lost, out) = dispatcher.heartbeat(
                Heartbeat(workerID: "w1", lastSequence: 1, holding: [1]), from: worker, now: now)
            XCTAssertTrue(lost == 0 && out.isEmpty)
        }
        XCTAssertEqual(dispatcher.lostDeliveries, 0)
        let (result, _) = dispatcher.complete(
            TaskResult(taskID: "a", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: 1), from: worker,
            now: now)
        XCTAssertNotNil(result)
    }
}

extension DispatcherTests {
    func testThroughputCountsFinishedTasksOverTheLastTenSeconds() {
        var meter = ThroughputMeter()
        let start = ContinuousClock.now
        for second in 0..<10 {
            for _ in 0..<50 { meter.record(at: start + .seconds(second) + .milliseconds(10)) }
        }
        XCTAssertEqual(meter.rate(at: start + .seconds(10) + .milliseconds(500)), 50, accuracy: 0.001)
        XCTAssertEqual(meter.rate(at: start + .seconds(30)), 0, "old events fall out of the window")
    }
}

extension DispatcherTests {
    func testAnUnreachableWorkerIsDeadAtOnce() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 1), peer: worker, now: now)
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 1), peer: other, now: now)
        let sent = assignments(dispatcher.enqueue(task("a")))
        let holder = dispatcher.workers.values.first { !$0.running.isEmpty }?.peer
        XCTAssertEqual(sent.count, 1)
        let (wasWorker, out) = dispatcher.workerUnreachable(holder ?? worker)
        XCTAssertTrue(wasWorker)
        XCTAssertTrue(assignments(out).isEmpty)
        XCTAssertEqual(
            dispatcher.takeWorkerLosses().count, 1, "its attempt is lost at once, for its operation to retry")
        XCTAssertFalse(dispatcher.workerUnreachable(PeerIdentity(Array("client".utf8))).wasWorker)
    }
}

extension DispatcherTests {
    func testWorkersThatAcceptBatchesGetTheirAssignmentsGroupedAndCreditStillHolds() {
        var dispatcher = makeDispatcher()
        let welcome = dispatcher.register(
            WorkerHello(workerID: "w1", slots: 3, acceptsBatches: true), peer: worker, now: now)
        guard case .welcome(let w)? = welcome.first?.message else { return XCTFail("\(welcome)") }
        XCTAssertTrue(w.acceptsBatches, "the coordinator says it takes TaskResultBatch")
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 2), peer: other, now: now)
        var out: [Outbound] = []
        for index in 0..<8 { out += dispatcher.enqueue(task("t\(index)")) }
        XCTAssertEqual(assignments(out).count, 5, "3 + 2 slots")
        XCTAssertEqual(out.filter { $0.peer == worker }.map(\.batchable), [true, true, true])
        XCTAssertEqual(
            out.filter { $0.peer == other }.map(\.batchable), [false, false], "w2 did not say it accepts batches")

        let sent = Outbound.coalesced(out)
        let toWorker = sent.filter { $0.peer == worker }
        XCTAssertEqual(toWorker.count, 1)
        guard case .taskAssignments(let grouped)? = toWorker.first?.message else { return XCTFail("\(toWorker)") }
        XCTAssertEqual(grouped.count, 3)
        XCTAssertEqual(sent.filter { $0.peer == other }.count, 2, "plain assignments to the other worker")
        XCTAssertEqual(
            Set(
                sent.flatMap { MessageBatching.unbatched($0.message) }.compactMap { message -> String? in
                    if case .taskAssignment(let a) = message { return a.taskID } else { return nil }
                }), Set(assignments(out).map(\.taskID)), "nothing lost or added")

        // Several results at once free several slots; nothing beyond the credit is sent.
        var freed: [Outbound] = []
        for assignment in grouped.prefix(2) {
            let (delivered, more) = dispatcher.complete(
                TaskResult(taskID: assignment.taskID, attempt: 1, outcome: .output(TaskOutput(data: []))), from: worker,
                now: now)
            XCTAssertNotNil(delivered)
            freed += more
        }
        XCTAssertEqual(assignments(freed).count, 2)
        XCTAssertEqual(dispatcher.workers[worker]?.running.count, 3)
        XCTAssertEqual(dispatcher.queuedTaskCount, 1)
    }

    func testCoalescingKeepsEachPeersOrderAndNonBatchableMessagesInPlace() {
        let client = PeerIdentity(Array("client".utf8))
        func item(_ index: UInt32) -> Outbound {
            Outbound(
                peer: client,
                message: .itemFinished(
                    ItemFinished(
                        batchID: "b", itemIndex: index, outputName: "item-\(index)",
                        outcome: .output(TaskOutput(data: [])))),
                batchable: true)
        }
        let finished = Outbound(peer: client, message: .batchFinished(BatchFinished(batchID: "b", succeeded: 3)))
        let cancel = Outbound(peer: worker, message: .cancelTask(CancelTask(taskID: "x", reason: "cancelled")))
        let sent = Outbound.coalesced([item(0), cancel, item(1), item(2), finished])
        XCTAssertEqual(sent.count, 3)
        guard case .itemsFinished(let items) = sent[0].message else { return XCTFail("\(sent)") }
        XCTAssertEqual(items.map(\.itemIndex), [0, 1, 2])
        XCTAssertEqual(sent[1].message, finished.message, "BatchFinished still follows the batch's items")
        XCTAssertEqual(sent[2].message, cancel.message)
    }
}

extension DispatcherTests {
    /// Minor 1: results are found by the key the worker echoes; a minor-0 worker's results (no key) by
    /// their task ID. A key that names another task, or a result for the wrong ID, is stale.
    func testResultsAreFoundByTheirKeyOrByTheirIDFromWorkersThatDoNotEchoKeys() {
        var dispatcher = makeDispatcher()
        _ = dispatcher.register(WorkerHello(workerID: "new", slots: 1, acceptsBatches: true), peer: worker, now: now)
        _ = dispatcher.register(WorkerHello(workerID: "old", slots: 1), peer: other, now: now)
        var keyed = task("k")
        keyed.taskKey = 77
        var out = dispatcher.enqueue(keyed)
        out += dispatcher.enqueue(task("plain"))  // no key: the dispatcher makes one up
        let sent = assignments(out)
        XCTAssertEqual(Set(sent.map(\.taskID)), ["k", "plain"])
        XCTAssertTrue(sent.allSatisfy { $0.taskKey != 0 }, "every assignment carries a key")
        XCTAssertEqual(sent.first { $0.taskID == "k" }?.taskKey, 77)
        func holder(_ id: String) -> PeerIdentity {
            out.first { if case .taskAssignment(let a) = $0.message { a.taskID == id } else { false } }!.peer
        }

        // A key naming another task is stale, whatever the ID says.
        let plainKey = sent.first { $0.taskID == "plain" }!.taskKey
        let (wrong, _) = dispatcher.complete(
            TaskResult(taskID: "k", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: plainKey),
            from: holder("k"), now: now)
        XCTAssertNil(wrong)
        XCTAssertEqual(dispatcher.staleResults, 1)

        // Echoed key, or (from either worker) no key at all: found, delivered with its key.
        let (first, _) = dispatcher.complete(
            TaskResult(taskID: "k", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: 77), from: holder("k"),
            now: now)
        XCTAssertEqual(first?.taskKey, 77)
        let (second, _) = dispatcher.complete(
            TaskResult(taskID: "plain", attempt: 1, outcome: .output(TaskOutput(data: []))), from: holder("plain"),
            now: now)
        XCTAssertEqual(second?.taskKey, plainKey)
        XCTAssertEqual(dispatcher.runningTaskCount, 0)
        XCTAssertNil(dispatcher.state(of: "plain"))
        XCTAssertNil(dispatcher.state(of: 77))
    }
}
