import Wire
import XCTest

@testable import Cluster

/// Downloads that stay where they landed (protocol minor 3): the coordinator gets only their metadata,
/// their tilt-shift may run only on the worker that holds them, and when that copy is lost the tilt-shift
/// fails with `inputMissing` so that its download runs again (`Lineage`).
final class InputPlacementTests: XCTestCase {
    private let a = PeerIdentity(Array("a".utf8))
    private let b = PeerIdentity(Array("b".utf8))
    private let now = ContinuousClock.now
    private let held = TaskOutput(heldOnWorker: true, size: 3_000_000, mediaType: "image/jpeg")

    private func assignments(_ out: [Outbound]) -> [(peer: PeerIdentity, assignment: TaskAssignment)] {
        out.compactMap { if case .taskAssignment(let assignment) = $0.message { ($0.peer, assignment) } else { nil } }
    }

    private func download(_ key: TaskKey) -> TaskAssignment {
        var assignment = TaskAssignment(
            taskID: "b/\(key)/download", batchID: "b", attempt: 1, kind: .download,
            source: "http://x/\(key).jpg", taskKey: key)
        assignment.keepOutput = true
        return assignment
    }

    private func tiltShift(_ key: TaskKey, from download: TaskKey) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(download)/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift,
            source: "http://x/\(download).jpg",
            inputs: [Lineage.input(from: self.download(download), output: held)], taskKey: key)
    }

    /// Workers `a` and `b` (one slot each); `a` downloaded image 1 (kept there, tilt-shift 101), `b` runs download 3.
    private func downloadedOnA() -> Dispatcher {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(WorkerHello(workerID: "a", slots: 1, acceptsBatches: true), peer: a, now: now)
        _ = dispatcher.enqueue(download(1), dependentKey: 101)
        _ = dispatcher.register(WorkerHello(workerID: "b", slots: 1, acceptsBatches: true), peer: b, now: now)
        _ = dispatcher.enqueue(download(3), dependentKey: 103)
        let (result, _) = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1),
            from: a, now: now)
        XCTAssertNotNil(result)
        return dispatcher
    }

    func testTheDownloadsBytesNeverReachTheCoordinatorAndTheTiltShiftRunsWhereTheyAre() {
        var dispatcher = downloadedOnA()
        XCTAssertEqual(dispatcher.downloadBytesReceived, 0)
        let sent = assignments(dispatcher.enqueue(tiltShift(101, from: 1), priority: 1))
        XCTAssertEqual(sent.map(\.peer), [a])
        XCTAssertEqual(sent.first?.assignment.inputs.first?.onWorker, true)
        XCTAssertTrue(dispatcher.takeLostInputs().isEmpty)
    }

    func testATiltShiftWhoseInputNobodyHoldsFailsAtOnceAndAHeldOneGoesToItsHolder() {
        var dispatcher = downloadedOnA()
        _ = dispatcher.release(101)  // the kept slot is given back (as after its timeout) …
        _ = dispatcher.enqueue(download(4), dependentKey: 104)  // … and download 4 takes it
        let (_, freedB) = dispatcher.complete(
            TaskResult(
                taskID: "b/3/download", attempt: 1, outcome: .failure(TaskFailure(code: .download, message: "404")),
                taskKey: 3),
            from: b, now: now)
        XCTAssertTrue(assignments(freedB).isEmpty)
        // The placement of 101 was released too: a tilt-shift whose input nobody holds fails at once.
        XCTAssertTrue(assignments(dispatcher.enqueue(tiltShift(101, from: 1), priority: 1)).isEmpty)
        XCTAssertEqual(dispatcher.takeLostInputs().map(\.taskKey), [101])

        // Download 4 finishes on a: its tilt-shift is pinned there, though b is free.
        var pinned = dispatcher
        _ = pinned.complete(
            TaskResult(taskID: "b/4/download", attempt: 1, outcome: .output(held), taskKey: 4), from: a, now: now)
        let sent = assignments(pinned.enqueue(tiltShift(104, from: 4), priority: 1))
        XCTAssertEqual(sent.map(\.peer), [a])
    }

    func testTheHoldersDeathFailsItsTiltShiftWithInputMissingInsteadOfRequeueingIt() {
        var running = downloadedOnA()
        _ = running.enqueue(tiltShift(101, from: 1), priority: 1)
        let (wasWorker, out) = running.workerUnreachable(a)
        XCTAssertTrue(wasWorker)
        XCTAssertFalse(
            running.takeWorkerLosses().contains { $0.result.taskKey == 101 }, "a lost input, not a lost attempt")
        XCTAssertTrue(assignments(out).allSatisfy { $0.assignment.taskKey != 101 }, "never sent to b without its input")
        let lost = running.takeLostInputs()
        XCTAssertEqual(lost.map(\.taskKey), [101])
        if case .failure(let failure) = lost.first?.outcome {
            XCTAssertEqual(failure.code, .inputMissing)
            XCTAssertTrue(failure.message.contains("http://x/1.jpg"), failure.message)
        } else {
            XCTFail("expected a failure")
        }
        XCTAssertEqual(running.inputsLost, 1)

        // Dead before its tilt-shift was queued: the tilt-shift fails as it is queued.
        var early = downloadedOnA()
        _ = early.workerUnreachable(a)
        XCTAssertTrue(assignments(early.enqueue(tiltShift(101, from: 1), priority: 1)).isEmpty)
        XCTAssertEqual(early.takeLostInputs().map(\.taskKey), [101])
    }

    func testADrainingHolderGivesUpItsWaitingTiltShifts() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(WorkerHello(workerID: "a", slots: 1, acceptsBatches: true), peer: a, now: now)
        _ = dispatcher.register(WorkerHello(workerID: "b", slots: 1, acceptsBatches: true), peer: b, now: now)
        _ = dispatcher.enqueue(download(1), dependentKey: 101)
        _ = dispatcher.enqueue(download(3), dependentKey: 103)
        let holder = dispatcher.state(of: 1) == .running(worker: a) ? a : b
        _ = dispatcher.workerLeft(holder, draining: true)
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(held), taskKey: 1),
            from: holder, now: now)
        XCTAssertTrue(dispatcher.reservations.isEmpty, "a draining worker keeps no slot")
        XCTAssertTrue(assignments(dispatcher.enqueue(tiltShift(101, from: 1), priority: 1)).isEmpty)
        XCTAssertEqual(dispatcher.takeLostInputs().map(\.taskKey), [101], "a draining worker is sent nothing new")
    }
}
