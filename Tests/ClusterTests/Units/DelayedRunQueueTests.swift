import ClusterSimulation
import Wire
import XCTest

/// The simulation's fixed-delay task runs (`--task-delay-ms`), on a clock the test sets: every run takes the
/// delay, a chained tilt-shift after its download's, as on a real worker.
final class DelayedRunQueueTests: XCTestCase {
    private let delay: UInt64 = 10
    private let sink = "/shared/out"

    /// Ends the runs due by `now` and returns them (every registration current unless `current` says otherwise).
    private func end(_ queue: inout DelayedRunQueue, at now: UInt64, current: Bool = true) -> [DelayedRunQueue.Ended] {
        var ended: [DelayedRunQueue.Ended] = []
        queue.end(upTo: now, isCurrent: { _, _ in current }) { ended.append($0) }
        return ended
    }

    private func chainedRuns(_ chaining: PhotoChaining) -> (runs: [SimulatedRun], download: TaskAssignment) {
        var worker = SimulatedPhotoWorker(chaining: chaining)
        let download = SimulatedPhotoWorkerTests.chainedDownload(source: "http://127.0.0.1:9/photo-1.jpg", sink: sink)
        return (worker.runs(answering: download), download)
    }

    func testAChainedTiltShiftTakesTheDelayAfterItsDownload() throws {
        let (runs, download) = chainedRuns(.on)
        let followOn = try XCTUnwrap(download.followOn)
        var queue = DelayedRunQueue(delayNs: delay)
        queue.start(runs, worker: 3, registration: 1, alone: true, now: 100)
        XCTAssertEqual(queue.nextDueNs, 110)
        XCTAssertEqual(end(&queue, at: 109), [])
        // The download's result at one delay; the tilt-shift starts then, in the same slot.
        XCTAssertEqual(
            end(&queue, at: 112),
            [
                DelayedRunQueue.Ended(
                    worker: 3, alone: true, messagesAtEnd: runs[0].messagesAtEnd,
                    nextTaskKey: followOn.taskKey)
            ])
        XCTAssertEqual(queue.nextDueNs, 122, "the tilt-shift takes the delay from the download's end")
        XCTAssertEqual(end(&queue, at: 121), [])
        let last = end(&queue, at: 122)
        XCTAssertEqual(last.map(\.messagesAtEnd), [runs[1].messagesAtEnd])
        XCTAssertEqual(last.map(\.nextTaskKey), [nil])
        XCTAssertEqual(runs[1].messagesAtEnd.joined().map(\.taskKey), [followOn.taskKey])
        XCTAssertNil(queue.nextDueNs)
    }

    func testTogetherSendsNothingAtTheDownloadsEndAndBothResultsAtTheTiltShifts() throws {
        let (runs, download) = chainedRuns(.together)
        XCTAssertEqual(runs.map(\.messagesAtEnd.count), [0, 1])
        var queue = DelayedRunQueue(delayNs: delay)
        queue.start(runs, worker: 0, registration: 1, alone: true, now: 0)
        XCTAssertEqual(end(&queue, at: 10).map(\.messagesAtEnd), [[]])
        let last = end(&queue, at: 20)
        XCTAssertEqual(
            last.map { $0.messagesAtEnd.map { $0.map(\.taskKey) } },
            [[[download.taskKey, try XCTUnwrap(download.followOn).taskKey]]])
    }

    func testAnUnchainedTaskTakesOneDelayAndRunsEndInTheOrderTheyStarted() {
        var worker = SimulatedPhotoWorker()
        let assignments = SimulatedPhotoWorkerTests.photoAssignments(
            source: "http://127.0.0.1:9/photo-2.jpg", sink: sink)
        var queue = DelayedRunQueue(delayNs: delay)
        queue.start(worker.runs(answering: assignments[0]), worker: 1, registration: 1, alone: true, now: 0)
        queue.start(worker.runs(answering: assignments[1]), worker: 2, registration: 1, alone: true, now: 5)
        let ended = end(&queue, at: 15)
        XCTAssertEqual(ended.map(\.worker), [1, 2])
        XCTAssertEqual(ended.map(\.nextTaskKey), [nil, nil])
        XCTAssertEqual(
            ended.flatMap { $0.messagesAtEnd.joined().map(\.taskKey) },
            [assignments[0].taskKey, assignments[1].taskKey])
    }

    func testARunOfAnEarlierRegistrationEndsSilentlyAndStartsNothing() {
        let (runs, _) = chainedRuns(.on)
        var queue = DelayedRunQueue(delayNs: delay)
        queue.start(runs, worker: 0, registration: 1, alone: true, now: 0)
        XCTAssertEqual(end(&queue, at: 10, current: false), [])
        XCTAssertNil(queue.nextDueNs, "the chained tilt-shift of a dropped assignment never starts")
    }
}
