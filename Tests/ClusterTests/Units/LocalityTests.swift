import Wire
import XCTest

@testable import Cluster

/// Locality in the dispatch rules: a download's worker keeps a slot, and its bytes, for the tilt-shift.
final class LocalityTests: XCTestCase {
    private let a = PeerIdentity(Array("a".utf8))
    private let b = PeerIdentity(Array("b".utf8))
    private let now = ContinuousClock.now
    private let image = TaskOutput(data: [0xFF, 0xD8, 0xFF, 1, 2, 3], mediaType: "image/jpeg")

    private func assignments(_ out: [Outbound]) -> [(peer: PeerIdentity, assignment: TaskAssignment)] {
        out.compactMap { if case .taskAssignment(let assignment) = $0.message { ($0.peer, assignment) } else { nil } }
    }

    private func download(_ key: TaskKey) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(key)/download", batchID: "b", attempt: 1, kind: .download, source: "http://x/\(key).jpg",
            taskKey: key)
    }

    private func tiltShift(_ key: TaskKey, input: TaskOutput, from download: TaskKey) -> TaskAssignment {
        TaskAssignment(
            taskID: "b/\(download)/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift,
            source: "http://x/\(download).jpg",
            inputs: [InjectedInput(fromTaskID: "b/\(download)/download", data: input.data, mediaType: input.mediaType)],
            taskKey: key)
    }

    /// A dispatcher with worker `a` (one slot) running download 1, whose tilt-shift is 101, and worker
    /// `b` (one slot) busy; download 2 waits in the queue.
    private func runningDownload() -> Dispatcher {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(WorkerHello(workerID: "a", slots: 1, acceptsBatches: true), peer: a, now: now)
        _ = dispatcher.enqueue(download(1), dependentKey: 101)
        _ = dispatcher.register(WorkerHello(workerID: "b", slots: 1, acceptsBatches: true), peer: b, now: now)
        _ = dispatcher.enqueue(download(3), dependentKey: 103)  // b's slot
        _ = dispatcher.enqueue(download(2), dependentKey: 102)  // queued
        return dispatcher
    }

    func testTheTiltShiftGoesToTheWorkerThatDownloadedWithoutTheBytes() {
        var dispatcher = runningDownload()
        let (result, out) = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(image), taskKey: 1), from: a, now: now)
        XCTAssertNotNil(result)
        XCTAssertTrue(assignments(out).isEmpty, "a's slot is kept for the tilt-shift, not given to download 2")
        XCTAssertEqual(dispatcher.queuedTaskCount, 1)

        let sent = assignments(dispatcher.enqueue(tiltShift(101, input: image, from: 1), priority: 1))
        XCTAssertEqual(sent.map(\.peer), [a])
        XCTAssertEqual(sent.first?.assignment.inputs.first?.onWorker, true)
        XCTAssertEqual(sent.first?.assignment.inputs.first?.data, [], "the bytes do not travel")
        XCTAssertEqual(dispatcher.localInputs, 1)
    }

    func testAWorkerThatLostTheInputGetsTheBytesAfterAll() {
        var dispatcher = runningDownload()
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(image), taskKey: 1), from: a, now: now)
        _ = dispatcher.enqueue(tiltShift(101, input: image, from: 1), priority: 1)
        let (result, out) = dispatcher.complete(
            TaskResult(
                taskID: "b/1/tilt-shift", attempt: 1,
                outcome: .failure(TaskFailure(code: .inputMissing, message: "gone")),
                taskKey: 101), from: a, now: now)
        XCTAssertNil(result, "not a failure of the task")
        let resent = assignments(out)
        XCTAssertEqual(resent.map(\.assignment.taskKey), [101], "first in line, before download 2")
        XCTAssertEqual(resent.first?.assignment.inputs.first?.data, image.data, "with the bytes this time")
        XCTAssertEqual(resent.first?.assignment.inputs.first?.onWorker, false)
        XCTAssertEqual(resent.first?.assignment.attempt, 2)
        XCTAssertEqual(dispatcher.localInputsMissed, 1)
        XCTAssertEqual(dispatcher.resends[.inputMissing], 1, "counted as a re-send")
    }

    func testAKeptSlotIsGivenBackWhenTheTiltShiftWillNotComeOrItsWorkerDies() {
        var dispatcher = runningDownload()
        _ = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(image), taskKey: 1), from: a, now: now)
        let out = dispatcher.release(101)
        XCTAssertEqual(assignments(out).map(\.assignment.taskKey), [2], "released: download 2 takes the slot")

        var dying = runningDownload()
        _ = dying.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(image), taskKey: 1), from: a, now: now)
        _ = dying.workerUnreachable(a)
        XCTAssertTrue(dying.reservations.isEmpty)
        let sent = assignments(dying.enqueue(tiltShift(101, input: image, from: 1), priority: 1))
        XCTAssertTrue(sent.isEmpty, "no free slot: b is busy; it waits with its bytes")
        let (_, next) = dying.complete(
            TaskResult(
                taskID: "b/3/download", attempt: 1, outcome: .failure(TaskFailure(code: .download, message: "404")),
                taskKey: 3),
            from: b, now: now)
        XCTAssertEqual(assignments(next).first?.assignment.taskKey, 101)
        XCTAssertEqual(assignments(next).first?.assignment.inputs.first?.data, image.data, "the bytes travel to b")
    }

    func testAManifestOrAFailureKeepsNoSlot() {
        var dispatcher = runningDownload()
        let manifest = TaskOutput(data: Array("http://x/y.jpg".utf8), mediaType: "text/uri-list")
        let (_, out) = dispatcher.complete(
            TaskResult(taskID: "b/1/download", attempt: 1, outcome: .output(manifest), taskKey: 1), from: a, now: now)
        XCTAssertEqual(assignments(out).map(\.assignment.taskKey), [2])
        XCTAssertTrue(dispatcher.reservations.isEmpty)
    }
}
