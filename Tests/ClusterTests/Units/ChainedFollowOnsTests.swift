import Wire
import XCTest

@testable import Cluster

/// Chained tasks as pure state: `ChainedFollowOns` (offer, attach, adopt, hold, hand over), `RemoteRun`'s
/// follow-ons, and the dispatcher applying them: one assignment for a download and its tilt-shift, the
/// tilt-shift adopted as running on the worker that holds the image, its result handed over in order.
final class ChainedFollowOnsTests: XCTestCase {
    private let a = PeerIdentity(Array("a".utf8))
    private let b = PeerIdentity(Array("b".utf8))
    private let now = ContinuousClock.now
    private let held = TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")

    private func download(_ key: TaskKey, attempt: UInt32 = 1) -> TaskAssignment {
        var download = TaskAssignment(
            taskID: "b/\(key)/download", batchID: "b", attempt: attempt, kind: .download,
            source: "http://x/\(key).jpg", taskKey: key)
        download.keepOutput = true
        return download
    }

    private func tiltShift(_ key: TaskKey, of download: TaskKey, attempt: UInt32 = 1) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(download)/tilt-shift", batchID: "b", attempt: attempt, kind: .tiltShift,
            source: "http://x/\(download).jpg",
            inputs: [InjectedInput(fromTaskID: "b/\(download)/download", data: [], onWorker: true)],
            parameters: WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10,
                outputFormat: .sameAsInput, jpegQuality: 0),
            taskKey: key)
    }

    private func result(_ assignment: TaskAssignment, _ outcome: TaskOutcome) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: outcome, taskKey: assignment.taskKey)
    }

    private func assignments(_ out: [Outbound]) -> [(peer: PeerIdentity, assignment: TaskAssignment)] {
        out.compactMap { if case .taskAssignment(let assignment) = $0.message { ($0.peer, assignment) } else { nil } }
    }

    private func dispatcher(chainedA: Bool = true, slotsA: Int = 1) -> Dispatcher {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        var hello = WorkerHello(workerID: "a", slots: UInt32(slotsA), acceptsBatches: true)
        hello.acceptsChainedTasks = chainedA
        _ = dispatcher.register(hello, peer: a, now: now)
        return dispatcher
    }

    // MARK: the book alone

    func testAnOfferIsAdoptedOnlyFromTheWorkerItWentToAndOnlyWhenTheImageStayedThere() {
        var book = ChainedFollowOns()
        book.offer(tiltShift(2, of: 1), with: 1)
        XCTAssertEqual(book.attach(1, to: a, accepted: true)?.taskKey, 2)
        XCTAssertNil(
            book.takeAttached(1, from: b, result: result(download(1), .output(held))), "another worker's answer")

        book.offer(tiltShift(2, of: 1), with: 1)
        _ = book.attach(1, to: a, accepted: true)
        let failed = result(download(1), .failure(TaskFailure(code: .download, message: "HTTP 404")))
        XCTAssertNil(book.takeAttached(1, from: a, result: failed), "a failed download runs no follow-on")
        XCTAssertTrue(book.isEmpty, "the offer is forgotten either way")

        book.offer(tiltShift(2, of: 1), with: 1)
        _ = book.attach(1, to: a, accepted: true)
        let manifest = result(download(1), .output(TaskOutput(data: [1, 2], mediaType: ManifestList.mediaType)))
        XCTAssertNil(book.takeAttached(1, from: a, result: manifest), "a manifest is never chained")

        book.offer(tiltShift(2, of: 1), with: 1)
        XCTAssertNil(book.attach(1, to: a, accepted: false), "an older worker gets the download alone")
        XCTAssertNil(book.takeAttached(1, from: a, result: result(download(1), .output(held))))

        book.offer(tiltShift(2, of: 1), with: 1)
        _ = book.attach(1, to: a, accepted: true)
        XCTAssertEqual(book.takeAttached(1, from: a, result: result(download(1), .output(held)))?.taskKey, 2)
    }

    func testAResultBeforeItsOperationAskedIsHeldThenHandedOverInOrder() {
        var book = ChainedFollowOns()
        book.adopt(tiltShift(2, of: 1), on: a)
        book.adopt(tiltShift(4, of: 3), on: a)
        XCTAssertEqual(book.takeAdopted().map(\.assignment.taskKey), [2, 4])
        let output = result(
            tiltShift(2, of: 1), .output(TaskOutput(location: "/out/1.jpg", size: 9, mediaType: "image/jpeg")))
        XCTAssertNil(book.hold(output, from: a), "held: nobody asked for it yet")
        let other = TaskResult(taskID: "x", attempt: 1, outcome: .output(held), taskKey: 9)
        XCTAssertEqual(book.hold(other, from: a), other, "a result of anything else passes")
        XCTAssertTrue(book.takeReady().isEmpty)
        XCTAssertTrue(book.requested(2), "adopted: not sent again")
        XCTAssertEqual(book.takeReady().map(\.result), [output])
        XCTAssertTrue(book.requested(4))
        XCTAssertTrue(book.takeReady().isEmpty, "4's result has not come: it goes the ordinary way")
        let late = result(tiltShift(4, of: 3), .output(held))
        XCTAssertEqual(book.hold(late, from: a), late)
        XCTAssertFalse(book.requested(4), "asked once")
        XCTAssertEqual(book.chainedCount, 2)
    }

    func testAWithdrawnFollowOnIsForgotten() {
        var book = ChainedFollowOns()
        book.adopt(tiltShift(2, of: 1), on: a)
        book.forget(2)
        let output = result(tiltShift(2, of: 1), .output(held))
        XCTAssertEqual(book.hold(output, from: a), output, "not held for an operation that will not ask")
        XCTAssertFalse(book.requested(2))
    }

    // MARK: RemoteRun

    func testEveryAttemptOfADownloadCarriesItsFollowOnAndALineageRerunChainsTheNextDependent() throws {
        let followOn = tiltShift(2, of: 1)
        var run = RemoteRun(
            assignment: download(1), lineage: nil, attempt: 1, workerLosses: 0,
            followOn: Shared(followOn))
        XCTAssertEqual(run.request.followOn?.value, followOn)
        let retried = run.retry(
            after: RemoteTaskError(
                failure: TaskFailure(code: .download, message: "503", isTransient: true),
                attempt: 1, worker: a))
        XCTAssertEqual(retried.followOn?.value, followOn, "a retried download is chained again")

        var dependent = RemoteRun(
            assignment: followOn, lineage: Lineage(producer: download(1)), attempt: 1, workerLosses: 0)
        XCTAssertNil(dependent.request.followOn)
        let lost = Result<TaskOutput, any Error>.failure(
            RemoteTaskError(
                failure: TaskFailure(code: .inputMissing, message: "gone"), attempt: 1, worker: a))
        guard case .send(let rerun) = dependent.step(after: lost) else { return XCTFail("expected the producer again") }
        let chained = try XCTUnwrap(rerun.followOn?.value, "the re-run download carries the dependent")
        XCTAssertEqual(chained.attempt, 1 + Lineage.attemptStride)
        guard case .send(let next) = dependent.step(after: .success(held)) else {
            return XCTFail("expected the dependent")
        }
        XCTAssertEqual(next.assignment.taskKey, chained.taskKey)
        XCTAssertEqual(next.assignment.attempt, chained.attempt, "what the worker ran is what the operation asks for")
    }

    // MARK: the dispatcher

    func testOneAssignmentForADownloadAndItsTiltShiftWhoseResultIsHandedOverWhenAsked() throws {
        var dispatcher = dispatcher()
        let sent = assignments(dispatcher.enqueue(download(1), dependentKey: 2, followOn: tiltShift(2, of: 1)))
        XCTAssertEqual(sent.map(\.peer), [a])
        XCTAssertEqual(sent.first?.assignment.followOn?.taskKey, 2, "the tilt-shift goes with the download")
        let downloadResult = TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1)
        let (delivered, out) = dispatcher.complete(downloadResult, from: a, now: now)
        XCTAssertEqual(delivered?.taskKey, 1, "the download's operation finishes")
        XCTAssertTrue(out.isEmpty)
        XCTAssertEqual(dispatcher.state(of: 2), .running(worker: a), "adopted: it runs on a, in the download's slot")
        XCTAssertEqual(dispatcher.workers[a]?.running, [2])
        XCTAssertEqual(dispatcher.takeAdoptedFollowOns().map(\.assignment.taskKey), [2])

        // Its result comes in the same message, before its operation asked: held.
        let output = TaskResult(
            taskID: "b/1/tilt-shift", attempt: 1,
            outcome: .output(TaskOutput(location: "/o/1.jpg", size: 3, mediaType: "image/jpeg")), taskKey: 2)
        let (early, _) = dispatcher.complete(output, from: a, now: now)
        XCTAssertNil(early)
        XCTAssertEqual(dispatcher.workers[a]?.running, [], "its slot is free")
        XCTAssertEqual(dispatcher.completedTasks, 2)

        // The operation asks: nothing is sent, the result is handed over.
        XCTAssertTrue(dispatcher.enqueue(tiltShift(2, of: 1), priority: 1).isEmpty)
        XCTAssertEqual(dispatcher.takeChainedResults().map(\.result), [output])
        XCTAssertNil(dispatcher.state(of: 2))
        XCTAssertEqual(dispatcher.staleResults, 0)
        XCTAssertTrue(dispatcher.chained.isEmpty)
    }

    func testAnOlderWorkerGetsTheTwoStepFlow() {
        var dispatcher = dispatcher(chainedA: false)
        let sent = assignments(dispatcher.enqueue(download(1), dependentKey: 2, followOn: tiltShift(2, of: 1)))
        XCTAssertNil(sent.first?.assignment.followOn)
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1), from: a, now: now)
        XCTAssertNil(dispatcher.state(of: 2))
        let tilt = assignments(dispatcher.enqueue(tiltShift(2, of: 1), priority: 1))
        XCTAssertEqual(tilt.map(\.assignment.taskKey), [2], "sent into the kept slot, by reference")
    }

    func testAFailedDownloadAdoptsNothingAndItsRetryIsChainedAgain() {
        var dispatcher = dispatcher()
        _ = dispatcher.enqueue(download(1), dependentKey: 2, followOn: tiltShift(2, of: 1))
        let failure = TaskResult(
            taskID: "b/1/download", attempt: 1,
            outcome: .failure(TaskFailure(code: .download, message: "HTTP 503", isTransient: true)), taskKey: 1)
        let (delivered, _) = dispatcher.complete(failure, from: a, now: now)
        XCTAssertNotNil(delivered)
        XCTAssertNil(dispatcher.state(of: 2))
        XCTAssertEqual(dispatcher.workers[a]?.running, [])
        XCTAssertTrue(dispatcher.chained.isEmpty)
        let again = assignments(
            dispatcher.enqueue(download(1, attempt: 2), dependentKey: 2, followOn: tiltShift(2, of: 1)))
        XCTAssertEqual(again.first?.assignment.followOn?.taskKey, 2)
        XCTAssertTrue(dispatcher.release(2).isEmpty, "the item is cancelled: the tilt-shift will not come")
    }

    func testCancellingAnAdoptedFollowOnReachesItsWorkerAndItsConfirmationFreesTheSlot() {
        var dispatcher = dispatcher()
        _ = dispatcher.enqueue(download(1), dependentKey: 2, followOn: tiltShift(2, of: 1))
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1), from: a, now: now)
        let out = dispatcher.cancel(key: 2, reason: "cancelled")
        guard case .cancelTask(let cancel) = out.first?.message else {
            return XCTFail("expected a CancelTask, got \(out)")
        }
        XCTAssertEqual(cancel.taskKey, 2)
        let confirmation = TaskResult(
            taskID: "b/1/tilt-shift", attempt: 1,
            outcome: .failure(TaskFailure(code: .cancelled, message: "cancelled")), taskKey: 2)
        let (delivered, _) = dispatcher.complete(confirmation, from: a, now: now)
        XCTAssertNil(delivered)
        XCTAssertEqual(dispatcher.workers[a]?.running, [])
        XCTAssertTrue(dispatcher.takeChainedResults().isEmpty)
        XCTAssertTrue(dispatcher.chained.isEmpty)
    }

    func testAWorkerThatDiesWhileFilteringLosesTheInputSoTheDownloadRunsAgain() {
        var dispatcher = dispatcher()
        _ = dispatcher.enqueue(download(1), dependentKey: 2, followOn: tiltShift(2, of: 1))
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1), from: a, now: now)
        _ = dispatcher.enqueue(tiltShift(2, of: 1), priority: 1)  // its operation asked
        _ = dispatcher.workerUnreachable(a)
        let lost = dispatcher.takeLostInputs()
        XCTAssertEqual(lost.map(\.taskKey), [2])
        guard case .failure(let failure) = lost.first?.outcome else { return XCTFail("expected a failure") }
        XCTAssertEqual(failure.code, .inputMissing, "lineage re-runs the download")
        XCTAssertTrue(dispatcher.takeWorkerLosses().isEmpty)
    }
}
