import Operations
import XCTest

/// Cancellation: of running operations (their task), of pending ones (at once), of a queue, and down a chain.
final class CancellationTests: XCTestCase {
    func testCancellingCancelsTheTaskRunningExecute() async throws {
        let sawCancellation = Gauge()
        let running = Gauge()
        let operation = AsyncBlockOperation(name: "long") {
            await withTaskCancellationHandler {
                running.enter()
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
            } onCancel: {
                sawCancellation.enter()
            }
        }
        let queue = WorkQueue()
        try queue.addOperation(operation)
        await eventually { running.total == 1 }
        operation.cancel(error: TestError("abort"))
        XCTAssertTrue(operation.isCancelled)
        await waitForQueue(queue)
        XCTAssertEqual(sawCancellation.total, 1)
        XCTAssertEqual(operation.state, .cancelled)
        XCTAssertEqual(operation.errors.first as? TestError, TestError("abort"))
    }

    func testCancellingAnOperationNeverCancelsTheNextOneOnTheSameTask() async throws {
        // A finishing operation hands a dependent that becomes ready to its own task; a cancelled task is
        // never reused, so the dependent of a cancelled operation runs on a fresh, uncancelled task.
        for _ in 0..<50 {
            let first = AsyncBlockOperation(name: "first") {}
            let remote = CompletableOperation<Int>(name: "remote")
            let sawCancelledTask = Gauge()
            let ran = Gauge()
            let next = AsyncBlockOperation(name: "next") {
                ran.enter()
                if Task.isCancelled { sawCancelledTask.enter() }
            }
            try remote.addDependency(first)
            try next.addDependency(remote)
            let queue = WorkQueue()
            try queue.addOperations([first, remote, next])
            await eventually { remote.isExecuting }
            remote.cancel()
            await waitForQueue(queue)
            XCTAssertEqual(remote.state, .cancelled)
            XCTAssertEqual(next.state, .finished)
            XCTAssertEqual(ran.total, 1)
            XCTAssertEqual(sawCancelledTask.total, 0)
        }
    }

    func testCancelAllAndPendingCancellation() async throws {
        let queue = WorkQueue(maxConcurrentOperationCount: 2)
        let operations = (0..<10).map { index in
            AsyncBlockOperation(name: "op\(index)") { try await Task.sleep(for: .seconds(30)) }
        }
        try queue.addOperations(operations)
        await eventually { operations.filter(\.isExecuting).count == 2 }
        XCTAssertEqual(queue.operationCount, 10)
        queue.cancelAll(error: TestError("shutdown"))
        await waitForQueue(queue)
        XCTAssertTrue(operations.allSatisfy { $0.state == .cancelled })
        XCTAssertEqual(queue.operationCount, 0)

        // Cancelling an operation that never started finishes it at once.
        let lonely = AsyncOperation(name: "lonely")
        lonely.cancel()
        XCTAssertEqual(lonely.state, .cancelled)
        try queue.addOperation(lonely)  // ignored, already finished
        XCTAssertEqual(queue.operationCount, 0)
    }

    func testRequireSuccessPolicyAndDeepCascade() async throws {
        let failing = AsyncBlockOperation(name: "failing") { throw TestError("boom") }
        let strict = AsyncOperation(name: "strict")
        let lenient = AsyncOperation(name: "lenient")
        try strict.addDependency(failing, policy: .requireSuccess)
        try lenient.addDependency(failing)
        let queue = WorkQueue()
        try queue.addOperations([failing, strict, lenient])
        await waitForQueue(queue)
        XCTAssertEqual(lenient.state, .finished)
        XCTAssertEqual(strict.state, .cancelled)
        let cause = strict.errors.first as? DependencyFailedError
        XCTAssertEqual(cause?.dependency, "failing")
        XCTAssertEqual(cause?.underlyingErrors.first as? TestError, TestError("boom"))

        // A cancellation cascading down a long required chain does not recurse deeply.
        var chain = [AsyncOperation(name: "c0")]
        for index in 1..<50_000 {
            let next = AsyncOperation(name: "c\(index)")
            try next.addDependency(chain[index - 1], policy: .requireSuccess)
            chain.append(next)
        }
        chain[0].cancel()
        XCTAssertTrue(chain.allSatisfy { $0.state == .cancelled })
    }
}
