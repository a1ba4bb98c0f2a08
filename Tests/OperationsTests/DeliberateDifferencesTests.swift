import Operations
import XCTest

/// Where the engine deliberately differs from ProcedureKit (docs/operations.md, "Where the engine differs
/// from ProcedureKit"): one test per decision.
final class DeliberateDifferencesTests: XCTestCase {
    /// ProcedureKit: cancelled with a timed-out error. Here: failed with an `OperationTimeoutError`.
    func testATimedOutOperationFailsWithATimeoutError() async throws {
        let cancelled = Gauge()
        let slow = AsyncBlockOperation(name: "slow") {
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                cancelled.enter()
                throw error
            }
        }
        slow.timeout = .milliseconds(20)
        let queue = WorkQueue()
        try queue.addOperation(slow)
        await waitForQueue(queue)
        XCTAssertEqual(slow.state, .failed)
        XCTAssertFalse(slow.isCancelled)
        XCTAssertEqual(slow.errors.count, 1)
        XCTAssertEqual((slow.errors.first as? OperationTimeoutError)?.timeout, .milliseconds(20))
        XCTAssertEqual(cancelled.total, 1, "the task running execute() was cancelled")
    }

    /// ProcedureKit: cancelled with the condition's error. Here: failed with a `ConditionFailedError`.
    func testAFailedConditionFailsTheOperation() async throws {
        let executed = Gauge()
        let refused = AsyncBlockOperation(name: "refused") { executed.enter() }
        refused.addCondition(BlockCondition(name: "online") { _ in throw TestError("offline") })
        let dependent = AsyncBlockOperation(name: "dependent") {}
        try dependent.addDependency(refused, policy: .requireSuccess)
        let queue = WorkQueue()
        try queue.addOperations([refused, dependent])
        await waitForQueue(queue)
        XCTAssertEqual(refused.state, .failed)
        XCTAssertFalse(refused.isCancelled)
        XCTAssertEqual(executed.total, 0)
        let failure = refused.errors.first as? ConditionFailedError
        XCTAssertEqual(failure?.condition, "online")
        XCTAssertEqual(failure?.underlyingError as? TestError, TestError("offline"))
        XCTAssertEqual(
            dependent.state, .cancelled, "a dependent that required success is cancelled, as for any failure")
    }

    /// ProcedureKit: finished when its queue starts it. Here: finished at once, queue or not.
    func testAnOperationCancelledBeforeItIsEnqueuedFinishesAtOnce() async throws {
        let finished = Gauge()
        let operation = AsyncOperation(name: "never enqueued")
        let dependent = AsyncBlockOperation(name: "dependent") {}
        try dependent.addDependency(operation)
        operation.onCompletion { _ in finished.enter() }
        operation.cancel(error: TestError("not needed"))
        XCTAssertEqual(operation.state, .cancelled)
        XCTAssertEqual(finished.total, 1, "completion handlers ran during cancel()")
        await operation.waitUntilFinished()  // returns at once

        // Its dependents are released without it ever being enqueued, and enqueueing it later does nothing.
        let queue = WorkQueue()
        try queue.addOperations([dependent, operation])
        await waitForQueue(queue)
        XCTAssertEqual(dependent.state, .finished)
        XCTAssertEqual(finished.total, 1)
    }
}
