import Wire
import XCTest

@testable import Cluster

/// Late results (`Dispatcher+LateResults`): the success of an attempt the coordinator already gave up on,
/// timed out or lost with a worker declared dead, is the task's result while the task has none yet: it
/// completes the task once, the retry is withdrawn (queued) or cancelled (running), and nothing is
/// delivered twice. Orders of events on the real `Dispatcher` and `TaskTimeouts`, no sockets.
final class LateResultTests: XCTestCase {
    private let w1 = PeerIdentity(Array("w1".utf8))
    private let w2 = PeerIdentity(Array("w2".utf8))
    private let start = ContinuousClock.now
    private let limit = Duration.seconds(3)

    private func dispatcher(workers: [PeerIdentity], chained: Bool = false) -> Dispatcher {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        for peer in workers {
            var hello = WorkerHello(workerID: peer.description, slots: 1, acceptsBatches: true)
            hello.acceptsChainedTasks = chained
            _ = dispatcher.register(hello, peer: peer, now: start)
        }
        return dispatcher
    }

    private func download(_ key: TaskKey, attempt: UInt32 = 1) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(key)/download", batchID: "b", attempt: attempt, kind: .download,
            source: "http://x/\(key).jpg", taskKey: key)
    }

    private func tiltShift(_ key: TaskKey, of download: TaskKey) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(download)/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift,
            source: "http://x/\(download).jpg",
            inputs: [InjectedInput(fromTaskID: "b/\(download)/download", data: [], onWorker: true)],
            parameters: WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10,
                outputFormat: .sameAsInput, jpegQuality: 0),
            taskKey: key)
    }

    private func succeeded(
        _ assignment: TaskAssignment, _ output: TaskOutput = TaskOutput(data: [1, 2, 3], mediaType: "image/jpeg")
    ) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(output),
            taskKey: assignment.taskKey)
    }

    private func failed(_ assignment: TaskAssignment, _ code: FailureCode) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt,
            outcome: .failure(TaskFailure(code: code, message: "\(code)")), taskKey: assignment.taskKey)
    }

    private func assignments(_ out: [Outbound]) -> [(peer: PeerIdentity, assignment: TaskAssignment)] {
        out.compactMap { if case .taskAssignment(let assignment) = $0.message { ($0.peer, assignment) } else { nil } }
    }

    private func cancels(_ out: [Outbound]) -> [(peer: PeerIdentity, key: TaskKey)] {
        out.compactMap { if case .cancelTask(let cancel) = $0.message { ($0.peer, cancel.taskKey) } else { nil } }
    }

    /// Sends `assignment`, runs its clock past the limit, and times it out as the coordinator's tick does.
    private func timedOut(
        _ assignment: TaskAssignment, _ dispatcher: inout Dispatcher,
        _ timeouts: inout TaskTimeouts
    ) -> [Outbound] {
        timeouts.sent(dispatcher.enqueue(assignment), now: start)
        let expired = timeouts.expire(now: start + limit, dispatcher: dispatcher)
        XCTAssertEqual(expired, [assignment.taskKey])
        return expired.flatMap { dispatcher.timeOut(key: $0, reason: "timed out after 3 s") }
    }

    // MARK: the success crosses the timeout's cancel (no retry queued yet)

    func testASuccessThatCrossesItsTimeoutCancelCompletesTheTaskOnceAndNothingIsRetried() {
        var dispatcher = dispatcher(workers: [w1])
        var timeouts = TaskTimeouts(limit: limit)
        let task = download(7)
        let cancel = timedOut(task, &dispatcher, &timeouts)
        XCTAssertEqual(cancels(cancel).map(\.key), [7], "the worker is told to cancel it")
        XCTAssertEqual(dispatcher.state(of: 7), .cancelling(worker: w1))

        // The worker finished before the cancel reached it: its success comes next.
        let (delivered, out) = dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(4))
        XCTAssertEqual(delivered?.taskKey, 7, "the success is the task's result")
        XCTAssertEqual(delivered?.attempt, 1)
        XCTAssertTrue(out.isEmpty)
        timeouts.finished(7)  // as the coordinator does with every delivered result
        XCTAssertTrue(timeouts.settle(dispatcher: dispatcher).isEmpty, "not failed as timed out: no retry follows")
        XCTAssertTrue(timeouts.timingOut.isEmpty)
        XCTAssertNil(dispatcher.state(of: 7))
        XCTAssertEqual(dispatcher.workers[w1]?.running, [], "its slot is free")
        XCTAssertEqual(dispatcher.workers[w1]?.completed, 1)
        XCTAssertEqual(dispatcher.completedTasks, 1)
        XCTAssertEqual(dispatcher.lateResultsUsed, 1)
        XCTAssertEqual(dispatcher.resends.total, 0)

        // The cancel reaches the worker after its result: ignored there. Nothing else comes; a duplicate
        // of the result (another connection's replay, say) is stale.
        let (again, _) = dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(5))
        XCTAssertNil(again, "delivered once")
        XCTAssertEqual(dispatcher.staleResults, 1, "counted in Dispatcher.complete")
        XCTAssertEqual(dispatcher.completedTasks, 1)
    }

    /// What today's rule still covers: a failure, `CANCELLED` or any other, is the cancel's confirmation,
    /// and the attempt fails as timed out (its operation retries it); a success crossing a cancel that is
    /// not a timeout's (the item was withdrawn) only confirms it.
    func testAFailureOfATimedOutAttemptConfirmsTheCancelAndASuccessCrossingAWithdrawalIsNobodys() {
        for code in [FailureCode.cancelled, .download] {
            var dispatcher = dispatcher(workers: [w1])
            var timeouts = TaskTimeouts(limit: limit)
            let task = download(7)
            _ = timedOut(task, &dispatcher, &timeouts)
            let (delivered, _) = dispatcher.complete(failed(task, code), from: w1, now: start + .seconds(4))
            XCTAssertNil(delivered, "\(code): the confirmation is nobody's result")
            XCTAssertEqual(timeouts.settle(dispatcher: dispatcher).map(\.key), [7], "\(code): failed as timed out")
            XCTAssertEqual(dispatcher.lateResultsUsed, 0)
            XCTAssertEqual(dispatcher.workers[w1]?.running, [])
        }

        for timingOut in [false, true] {
            var dispatcher = dispatcher(workers: [w1])
            var timeouts = TaskTimeouts(limit: limit)
            let task = download(8)
            if timingOut {
                _ = timedOut(task, &dispatcher, &timeouts)  // then its item is cancelled
                XCTAssertTrue(
                    dispatcher.cancel(key: 8, reason: "cancelled").isEmpty, "the cancel is on its way already")
            } else {
                _ = dispatcher.enqueue(task)
                XCTAssertEqual(cancels(dispatcher.cancel(key: 8, reason: "cancelled")).map(\.key), [8])
            }
            let (delivered, _) = dispatcher.complete(succeeded(task), from: w1, now: start)
            XCTAssertNil(delivered, "the item was withdrawn: nobody waits for it")
            XCTAssertEqual(dispatcher.lateResultsUsed, 0)
            XCTAssertEqual(dispatcher.completedTasks, 0)
            XCTAssertEqual(dispatcher.workers[w1]?.running, [])
        }
    }

    // MARK: the worker is declared dead, its retry queued or running, then its success comes

    /// w1 times out a task, then goes silent past the worker timeout (stalled, not gone): the attempt is let
    /// go and fails as timed out; its retry is queued (no free slot). w1's success then comes: it completes
    /// the task and the retry is withdrawn before it was ever sent.
    func testTheLateSuccessOfAStalledWorkerWithdrawsTheQueuedRetry() {
        var dispatcher = dispatcher(workers: [w1])
        var timeouts = TaskTimeouts(limit: limit)
        let task = download(7)
        _ = timedOut(task, &dispatcher, &timeouts)
        XCTAssertEqual(dispatcher.expireWorkers(now: start + .seconds(10)).dead, ["w1"])
        XCTAssertEqual(
            timeouts.settle(dispatcher: dispatcher).map(\.key), [7], "failed as timed out: its operation retries")
        XCTAssertTrue(
            assignments(dispatcher.enqueue(download(7, attempt: 2), avoiding: w1)).isEmpty, "no worker: queued")
        XCTAssertEqual(dispatcher.state(of: 7), .queued)

        let (delivered, out) = dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(11))
        XCTAssertEqual(delivered?.taskKey, 7, "first valid result wins")
        XCTAssertEqual(delivered?.attempt, 1)
        XCTAssertTrue(out.isEmpty, "nothing to cancel: the retry was never sent")
        XCTAssertNil(dispatcher.state(of: 7), "the retry is withdrawn")
        XCTAssertEqual(dispatcher.queuedTaskCount, 0)
        XCTAssertEqual(dispatcher.lateResultsUsed, 1)
        XCTAssertEqual(dispatcher.completedTasks, 1)

        // A worker registering now is sent nothing.
        XCTAssertTrue(
            assignments(
                dispatcher.register(
                    WorkerHello(workerID: "w2", slots: 1, acceptsBatches: true),
                    peer: w2, now: start + .seconds(12))
            ).isEmpty)
        let (again, _) = dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(12))
        XCTAssertNil(again, "delivered once")
        XCTAssertEqual(dispatcher.staleResults, 1)
    }

    /// As above, with the retry already running on w2: w1's late success completes the task, the retry is
    /// cancelled on w2, and w2's answer, whatever it is, only confirms that cancel.
    func testTheLateSuccessOfAStalledWorkerCancelsTheRunningRetry() {
        for retryAnswer in [FailureCode?.none, .cancelled] {
            var dispatcher = dispatcher(workers: [w1])
            var timeouts = TaskTimeouts(limit: limit)
            let task = download(7)
            _ = timedOut(task, &dispatcher, &timeouts)
            XCTAssertEqual(dispatcher.state(of: 7), .cancelling(worker: w1))
            _ = dispatcher.register(
                WorkerHello(workerID: "w2", slots: 1, acceptsBatches: true), peer: w2, now: start + .seconds(10))
            XCTAssertEqual(dispatcher.expireWorkers(now: start + .seconds(10)).dead, ["w1"])
            XCTAssertEqual(timeouts.settle(dispatcher: dispatcher).map(\.key), [7])
            let retry = download(7, attempt: 2)
            let sent = dispatcher.enqueue(retry, avoiding: w1)
            XCTAssertEqual(assignments(sent).map(\.peer), [w2])
            timeouts.sent(sent, now: start + .seconds(10))

            let (delivered, out) = dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(11))
            XCTAssertEqual(delivered?.taskKey, 7)
            XCTAssertEqual(delivered?.attempt, 1, "the stalled attempt's output")
            XCTAssertEqual(cancels(out).map(\.peer), [w2], "the retry is cancelled where it runs")
            XCTAssertEqual(cancels(out).map(\.key), [7])
            XCTAssertEqual(dispatcher.state(of: 7), .cancelling(worker: w2), "its slot stays taken until w2 answers")
            timeouts.finished(7)
            XCTAssertEqual(
                timeouts.expire(now: start + .seconds(60), dispatcher: dispatcher), [], "the retry's clock stopped")

            let answer = retryAnswer.map { failed(retry, $0) } ?? succeeded(retry)
            let (confirmation, _) = dispatcher.complete(answer, from: w2, now: start + .seconds(12))
            XCTAssertNil(
                confirmation,
                "\(String(describing: retryAnswer)): the retry's answer confirms its cancel, it is not delivered")
            XCTAssertNil(dispatcher.state(of: 7))
            XCTAssertEqual(dispatcher.workers[w2]?.running, [], "w2's slot is free")
            XCTAssertEqual(dispatcher.completedTasks, 1, "one result for the task")
            XCTAssertEqual(dispatcher.lateResultsUsed, 1)
            XCTAssertEqual(dispatcher.staleResults, 0)
        }
    }

    /// Only a success of the attempt let go, from the connection it ran on, while the task has no result:
    /// a late failure, a forged result from another worker, and anything after the task's result are stale.
    func testOnlyTheLetGoAttemptsOwnSuccessIsUsedAndOnlyBeforeTheTaskHasAResult() {
        var dispatcher = dispatcher(workers: [w1])
        let task = download(7)
        XCTAssertEqual(assignments(dispatcher.enqueue(task)).map(\.peer), [w1])
        _ = dispatcher.register(
            WorkerHello(workerID: "w2", slots: 1, acceptsBatches: true), peer: w2, now: start + .seconds(10))
        XCTAssertEqual(dispatcher.expireWorkers(now: start + .seconds(10)).dead, ["w1"])
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.result.taskKey), [7], "lost with its worker, not timed out")
        let retry = download(7, attempt: 2)
        XCTAssertEqual(assignments(dispatcher.enqueue(retry, avoiding: w1)).map(\.peer), [w2])

        XCTAssertNil(
            dispatcher.complete(failed(task, .download), from: w1, now: start + .seconds(11)).0,
            "a failure is no result")
        XCTAssertNil(
            dispatcher.complete(
                succeeded(task, TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")),
                from: w1, now: start + .seconds(11)
            ).0,
            "an image kept on a worker declared dead is gone with its cache")
        XCTAssertNil(
            dispatcher.complete(succeeded(task), from: w2, now: start + .seconds(11)).0,
            "not from the connection it ran on")
        XCTAssertEqual(dispatcher.staleResults, 3)
        XCTAssertEqual(dispatcher.state(of: 7), .running(worker: w2), "the retry runs on")

        let (delivered, _) = dispatcher.complete(succeeded(retry), from: w2, now: start + .seconds(12))
        XCTAssertEqual(delivered?.attempt, 2, "the retry came first")
        XCTAssertNil(
            dispatcher.complete(succeeded(task), from: w1, now: start + .seconds(13)).0, "the task has its result")
        XCTAssertEqual(dispatcher.staleResults, 4)
        XCTAssertEqual(dispatcher.lateResultsUsed, 0)
        XCTAssertEqual(dispatcher.completedTasks, 1)
        XCTAssertTrue(dispatcher.lateAttempts.isEmpty, "forgotten once the task is answered")
    }

    /// The attempts let go are kept only while their task may still want them: forgotten when the task is
    /// withdrawn during its backoff (a cancel of a task the dispatcher does not hold) or its batch finishes.
    func testLetGoAttemptsAreForgottenWithTheirTaskOrBatch() {
        var dispatcher = dispatcher(workers: [w1])
        _ = dispatcher.enqueue(download(7))
        _ = dispatcher.register(WorkerHello(workerID: "w2", slots: 1, acceptsBatches: true), peer: w2, now: start)
        _ = dispatcher.enqueue(download(8))
        _ = dispatcher.heartbeat(from: w2, now: start)
        XCTAssertEqual(dispatcher.expireWorkers(now: start + .seconds(10)).dead.sorted(), ["w1", "w2"])
        XCTAssertEqual(dispatcher.lateAttempts.count, 2)
        _ = dispatcher.cancel(key: 7, reason: "cancelled")
        XCTAssertEqual(dispatcher.lateAttempts.count, 1)
        dispatcher.forgetShare(of: "b")
        XCTAssertTrue(dispatcher.lateAttempts.isEmpty)
        // While the operation waits out its backoff the dispatcher holds nothing: the late success is stale.
        XCTAssertNil(dispatcher.complete(succeeded(download(8)), from: w2, now: start + .seconds(11)).0)
        XCTAssertEqual(dispatcher.staleResults, 1)
    }

    // MARK: chained download + tilt-shift

    /// A download timed out on w1 with its tilt-shift chained: its success crossed the cancel, and w1 started
    /// the tilt-shift, which that cancel then reached (a worker's cancel for a download reaches the
    /// tilt-shift chained to it). The download's success is used; the tilt-shift's `CANCELLED` is that
    /// cancel's, not the item's: it is sent to w1 again, by reference, as a new attempt; its output is
    /// handed over once.
    func testATimedOutDownloadsLateSuccessKeepsItsChainedTiltShiftWhichRunsAgainIfTheCancelReachedIt() {
        var dispatcher = dispatcher(workers: [w1], chained: true)
        var timeouts = TaskTimeouts(limit: limit)
        let fetch = download(1)
        let sent = dispatcher.enqueue(fetch, dependentKey: 2, followOn: tiltShift(2, of: 1))
        XCTAssertEqual(assignments(sent).first?.assignment.followOn?.taskKey, 2)
        timeouts.sent(sent, now: start)
        XCTAssertEqual(timeouts.expire(now: start + limit, dispatcher: dispatcher), [1])
        _ = dispatcher.timeOut(key: 1, reason: "timed out after 3 s")

        let (delivered, _) = dispatcher.complete(
            succeeded(fetch, TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")), from: w1,
            now: start + .seconds(4))
        XCTAssertEqual(delivered?.taskKey, 1, "the download's success is used")
        XCTAssertEqual(dispatcher.state(of: 2), .running(worker: w1), "its tilt-shift runs there, adopted")
        XCTAssertEqual(dispatcher.takeAdoptedFollowOns().map(\.assignment.taskKey), [2])

        // The download's cancel reached the tilt-shift: its CANCELLED comes (before its operation asked).
        let (cancelled, again) = dispatcher.complete(
            failed(tiltShift(2, of: 1), .cancelled), from: w1, now: start + .seconds(5))
        XCTAssertNil(cancelled, "not the item's cancel: nothing delivered")
        let resent = assignments(again)
        XCTAssertEqual(resent.map(\.peer), [w1], "sent again where its input is")
        XCTAssertEqual(resent.first?.assignment.attempt, 2, "as a new attempt")
        XCTAssertEqual(resent.first?.assignment.inputs.map(\.onWorker), [true], "by reference")
        XCTAssertEqual(dispatcher.resends[.timedOut], 1)

        // Its operation asks (nothing more is sent), then its output comes and is handed over once.
        XCTAssertTrue(dispatcher.enqueue(tiltShift(2, of: 1), priority: 1).isEmpty)
        guard let retried = resent.first?.assignment else { return XCTFail("no tilt-shift sent") }
        let output = succeeded(retried, TaskOutput(location: "/o/1.jpg", size: 3, mediaType: "image/jpeg"))
        let (final, _) = dispatcher.complete(output, from: w1, now: start + .seconds(6))
        XCTAssertEqual(final?.taskKey, 2)
        XCTAssertTrue(dispatcher.takeChainedResults().isEmpty, "delivered directly, not twice")
        XCTAssertEqual(dispatcher.completedTasks, 2)
        XCTAssertEqual(dispatcher.staleResults, 0)
        XCTAssertEqual(dispatcher.workers[w1]?.running, [])
    }

    /// The same, the cancel reaching w1 before the download finished there anyway (the tilt-shift started
    /// after it): the tilt-shift's own output is its result, handed over when its operation asks.
    func testATimedOutDownloadsChainedTiltShiftThatTheCancelMissedKeepsItsOutput() {
        var dispatcher = dispatcher(workers: [w1], chained: true)
        var timeouts = TaskTimeouts(limit: limit)
        let fetch = download(1)
        timeouts.sent(dispatcher.enqueue(fetch, dependentKey: 2, followOn: tiltShift(2, of: 1)), now: start)
        _ = timeouts.expire(now: start + limit, dispatcher: dispatcher)
        _ = dispatcher.timeOut(key: 1, reason: "timed out after 3 s")
        _ = dispatcher.complete(
            succeeded(fetch, TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")),
            from: w1, now: start + .seconds(4))
        let output = succeeded(tiltShift(2, of: 1), TaskOutput(location: "/o/1.jpg", size: 3, mediaType: "image/jpeg"))
        XCTAssertNil(dispatcher.complete(output, from: w1, now: start + .seconds(5)).0, "held until its operation asks")
        XCTAssertTrue(dispatcher.enqueue(tiltShift(2, of: 1), priority: 1).isEmpty)
        XCTAssertEqual(dispatcher.takeChainedResults().map(\.result), [output])
        XCTAssertEqual(dispatcher.resends.total, 0)
        XCTAssertEqual(dispatcher.lateResultsUsed, 1)
    }

    // MARK: give-back and lineage

    /// A timed-out task asked back: "given back" confirms the cancel (it never ran), and the attempt fails
    /// as timed out, as before; a tilt-shift pinned to the worker holding its input (a lineage re-run's
    /// dependent) whose success crosses its timeout's cancel is used like any other.
    func testAGivenBackTimedOutTaskIsConfirmedAndAPinnedTiltShiftsLateSuccessIsUsed() {
        var dispatcher = dispatcher(workers: [w1])
        var timeouts = TaskTimeouts(limit: limit)
        let task = download(7)
        _ = timedOut(task, &dispatcher, &timeouts)
        _ = dispatcher.givenBack(
            TaskGivenBack(taskKey: 7, attempt: 1, givenBack: true), from: w1, now: start + .seconds(4))
        XCTAssertEqual(timeouts.settle(dispatcher: dispatcher).map(\.key), [7])
        XCTAssertEqual(dispatcher.lateResultsUsed, 0)

        // Download 10 (a re-run, its image kept on w1) then its tilt-shift 11, pinned to w1.
        let rerun = download(10, attempt: 101)
        _ = dispatcher.enqueue(rerun, dependentKey: 11)
        _ = dispatcher.complete(
            succeeded(rerun, TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")),
            from: w1, now: start + .seconds(5))
        var timeouts2 = TaskTimeouts(limit: limit)
        var tilt = tiltShift(11, of: 10)
        tilt.attempt = 101
        let sent = dispatcher.enqueue(tilt, priority: 1)
        XCTAssertEqual(assignments(sent).map(\.peer), [w1], "sent into the slot kept for it")
        timeouts2.sent(sent, now: start)
        XCTAssertEqual(timeouts2.expire(now: start + limit, dispatcher: dispatcher), [11])
        _ = dispatcher.timeOut(key: 11, reason: "timed out after 3 s")
        let (delivered, _) = dispatcher.complete(
            succeeded(tilt, TaskOutput(location: "/o/10.jpg", size: 3, mediaType: "image/jpeg")), from: w1,
            now: start + .seconds(6))
        XCTAssertEqual(delivered?.taskKey, 11)
        XCTAssertEqual(dispatcher.lateResultsUsed, 1)
    }
}
