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
        assertDependencyFailed(strict.errors.first, dependency: "failing", cause: TestError("boom"))

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

    func testCancelDuringASlowConditionFinishesAtOnceWithoutWaitingForIt() async throws {
        // The condition ignores cancellation and answers only when the gate opens, at the end of the test.
        let gate = Gate()
        let executed = Gauge()
        let slow = AsyncBlockOperation(name: "slow condition") { executed.enter() }
        slow.addCondition(
            BlockCondition(name: "slow") { _ in
                await gate.wait()
                return true
            })
        let recorder = Recorder()
        slow.addObserver(BlockObserver(didFinish: { _, state, _ in recorder.record("finished \(state)") }))
        let queue = WorkQueue(maxConcurrentOperationCount: 1)
        let next = AsyncBlockOperation(name: "next") {}
        try queue.addOperations([slow, next])
        await eventually("the condition is being evaluated") { gate.waiting == 1 }
        XCTAssertEqual(slow.state, .ready)

        slow.cancel(error: TestError("stop"))
        // Finished by cancel itself: not executed, and its queue slot is free for the next operation, all
        // while the condition still has not answered.
        XCTAssertEqual(slow.state, .cancelled)
        XCTAssertEqual(slow.errors.first as? TestError, TestError("stop"))
        XCTAssertEqual(recorder.events, ["finished cancelled"])
        await waitFor(next)
        XCTAssertEqual(next.state, .finished)
        XCTAssertEqual(gate.waiting, 1, "the condition is still being evaluated")

        gate.open()
        await waitForQueue(queue)
        XCTAssertEqual(executed.total, 0, "a cancelled operation never executes, whatever the condition answers")
        XCTAssertEqual(recorder.events, ["finished cancelled"])
    }

    func testCancelWhileWaitingForAMutualExclusionSlotReleasesNothingItDoesNotHold() async throws {
        let holder = CompletableOperation<Int>(name: "holder")
        holder.addCondition(MutualExclusion(category: "cancel-while-waiting"))
        let waiter = AsyncBlockOperation(name: "waiter") {}
        waiter.addCondition(MutualExclusion(category: "cancel-while-waiting"))
        let queue = WorkQueue()
        try queue.addOperation(holder)
        await eventually { holder.isExecuting }
        try queue.addOperation(waiter)
        await eventually { waiter.state == .ready }
        waiter.cancel()
        XCTAssertEqual(waiter.state, .cancelled)
        XCTAssertEqual(MutualExclusion.holders(of: "cancel-while-waiting"), 1, "the holder keeps its slot")
        holder.complete(with: 0)
        await waitForQueue(queue)
        XCTAssertEqual(MutualExclusion.holders(of: "cancel-while-waiting"), 0)
    }

    func testARequiredDependencyFailingWhileAnotherOneFinishesNeverLetsTheDependentStart() async throws {
        // The dependent must be cancelled by the failure of `required` even when `other`, finishing at the
        // same moment, satisfies its last edge (a race the stress test found).
        let started = Gauge()
        for round in 0..<500 {
            let required = CompletableOperation<Int>(name: "required \(round)")
            let other = CompletableOperation<Int>(name: "other \(round)")
            let dependent = AsyncBlockOperation(name: "dependent \(round)") { started.enter() }
            try dependent.addDependency(required, policy: .requireSuccess)
            try dependent.addDependency(other)
            let queue = WorkQueue()
            try queue.addOperations([required, other, dependent])
            await eventually { required.isExecuting && other.isExecuting }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { required.fail(with: TestError("failed")) }
                group.addTask { other.complete(with: 1) }
            }
            await waitForQueue(queue)
            XCTAssertEqual(dependent.state, .cancelled, "round \(round)")
        }
        XCTAssertEqual(started.total, 0)
    }
}
