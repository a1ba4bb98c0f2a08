import Operations
import XCTest

/// The lifecycle: states, readiness, finishing exactly once.
final class LifecycleTests: XCTestCase {
    func testLifecycleStates() async throws {
        let blocker = CompletableOperation<Int>(name: "blocker")
        let remote = CompletableOperation<Int>(name: "remote")
        try remote.addDependency(blocker)
        XCTAssertEqual(remote.state, .pending)
        let queue = WorkQueue(maxConcurrentOperationCount: 1)
        try queue.addOperations([blocker, remote])
        await eventually("blocker executing") { blocker.state == .executing }
        XCTAssertEqual(remote.state, .pending)
        blocker.complete(with: 1)
        await eventually("remote executing") { remote.state == .executing }
        XCTAssertTrue(remote.isExecuting)
        XCTAssertFalse(remote.isFinished)
        XCTAssertEqual(remote.attempt, 1)
        remote.complete(with: 2)
        await waitForQueue(queue)
        XCTAssertEqual(remote.state, .finished)
        XCTAssertTrue(remote.isFinished)
        XCTAssertEqual(remote.output, 2)
        XCTAssertTrue(remote.errors.isEmpty)
    }

    func testReadyStateWhileWaitingForASlot() async throws {
        let blocker = CompletableOperation<Int>(name: "blocker")
        let waiting = AsyncOperation(name: "waiting")
        let queue = WorkQueue(maxConcurrentOperationCount: 1)
        try queue.addOperation(blocker)
        await eventually { blocker.isExecuting }
        try queue.addOperation(waiting)
        XCTAssertEqual(waiting.state, .ready)
        XCTAssertThrowsError(try waiting.addDependency(AsyncOperation())) { error in
            XCTAssertEqual(error as? OperationUsageError, .alreadyStarted(operation: waiting.name))
        }
        blocker.complete(with: 0)
        await waitForQueue(queue)
        XCTAssertEqual(waiting.state, .finished)
    }

    func testFinishingHappensExactlyOnceFirstCallWins() async throws {
        for round in 0..<200 {
            let finishes = Gauge()
            let operation = CompletableOperation<Int>(name: "race\(round)")
            operation.addObserver(BlockObserver(didFinish: { _, _, _ in finishes.enter() }))
            let queue = WorkQueue()
            try queue.addOperation(operation)
            await withTaskGroup(of: Void.self) { group in
                for racer in 0..<6 {
                    group.addTask {
                        switch racer % 3 {
                        case 0: operation.complete(with: racer)
                        case 1: operation.fail(with: TestError("racer \(racer)"))
                        default: operation.cancel()
                        }
                    }
                }
            }
            await waitForQueue(queue)
            XCTAssertEqual(finishes.total, 1, "round \(round): \(operation)")
            XCTAssertFalse(operation.complete(with: -1), "later calls lose")
            XCTAssertFalse(operation.fail(with: TestError("late")))
        }
        let done = AsyncOperation(name: "done")
        let queue = WorkQueue()
        try queue.addOperation(done)
        await waitForQueue(queue)
        done.cancel(error: TestError("too late"))
        XCTAssertEqual(done.state, .finished, "cancel after finishing does nothing")
        XCTAssertFalse(done.isCancelled)
    }
}
