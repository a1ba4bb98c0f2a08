import Operations
import XCTest

final class NilProducer: AsyncOperation, ResultProducing, @unchecked Sendable {
    init() { super.init(name: "nil producer") }
    var output: [UInt8]? { nil }
}

actor ResultSink {
    var values: [String] = []
    func append(_ value: String) { values.append(value) }
}

final class EngineTests: XCTestCase {
    // MARK: Lifecycle

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

    // MARK: Remote operations and cancellation

    func testRemoteOperationCompletedByAnExternalEvent() async throws {
        let network = ResultSink()
        let remote = CompletableOperation<[UInt8]>(name: "download on worker") { operation in
            await network.append("sent task \(operation.id)")
        }
        let queue = WorkQueue()
        try queue.addOperation(remote)
        await eventually("request sent") { remote.isExecuting }
        // The "result message" arrives on some other task.
        Task.detached { remote.complete(with: [0xFF, 0xD8]) }
        await waitForQueue(queue)
        XCTAssertEqual(remote.state, .finished)
        XCTAssertEqual(remote.output, [0xFF, 0xD8])
        let sent = await network.values
        XCTAssertEqual(sent, ["sent task \(remote.id)"])

        let failing = CompletableOperation<[UInt8]>(name: "failing on worker")
        try queue.addOperation(failing)
        failing.fail(with: TestError("worker crashed"))
        await waitForQueue(queue)
        XCTAssertEqual(failing.state, .failed)
        XCTAssertEqual(failing.errors.first as? TestError, TestError("worker crashed"))

        let cancelMessages = Gauge()
        let cancelled = CompletableOperation<[UInt8]>(name: "cancelled on worker", onCancel: { _ in cancelMessages.enter() })
        try queue.addOperation(cancelled)
        await eventually { cancelled.isExecuting }
        cancelled.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(cancelled.state, .cancelled)
        XCTAssertEqual(cancelMessages.total, 1, "onCancel sends the cancel message to the worker")
    }

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

    // MARK: Groups

    func testLongLivedGroupFinishesAfterCloseAndLastChild() async throws {
        let group = GroupOperation(name: "batch", keepsRunningUntilClosed: true)
        let added = Gauge()
        group.addObserver(BlockObserver(didAddChild: { _, _ in added.enter() }))
        let queue = WorkQueue()
        try queue.addOperation(group)
        await eventually { group.isExecuting }
        var remotes: [CompletableOperation<Int>] = []
        for round in 0..<3 {
            let remote = CompletableOperation<Int>(name: "task\(round)")
            try group.addChild(remote)
            remotes.append(remote)
            await eventually { remote.isExecuting }
            remote.complete(with: round)
            await waitFor(remote)
            try await Task.sleep(for: .milliseconds(5))
            XCTAssertEqual(group.state, .executing, "no unfinished child, but not closed")
        }
        let last = CompletableOperation<Int>(name: "last")
        try group.addChild(last)
        group.close()
        try await Task.sleep(for: .milliseconds(5))
        XCTAssertEqual(group.state, .executing, "closed, but a child is still running")
        last.complete(with: 99)
        await waitFor(group)
        XCTAssertEqual(group.state, .finished)
        XCTAssertEqual(added.total, 4)
        XCTAssertThrowsError(try group.addChild(AsyncOperation(name: "late"))) { error in
            XCTAssertEqual(error as? OperationUsageError, .groupFinished(group: "batch", child: "late"))
        }
    }

    func testGroupCollectsChildErrorsAndChildrenDependOnOutsideOperations() async throws {
        let outside = ResultOperation<Int>(name: "outside") { 41 }
        let child = TransformOperation<Int, Int>(name: "child") { $0 + 1 }
        try child.injectResult(from: outside)
        let bad1 = AsyncBlockOperation(name: "bad1") { throw TestError("one") }
        let bad2 = AsyncBlockOperation(name: "bad2") { throw TestError("two") }
        let group = GroupOperation(name: "group", operations: [child, bad1, bad2])
        let queue = WorkQueue()
        try queue.addOperations([group, outside])
        await waitForQueue(queue)
        XCTAssertEqual(child.output, 42)
        XCTAssertEqual(group.state, .failed)
        XCTAssertEqual(Set(group.errors.compactMap { ($0 as? TestError)?.message }), ["one", "two"])
        XCTAssertEqual(group.childErrors.count, 2)
    }

    func testGroupAsADependency() async throws {
        let recorder = Recorder()
        let group = GroupOperation(name: "g", operations: (0..<5).map { index in
            AsyncBlockOperation(name: "child\(index)") {
                try await Task.sleep(for: .milliseconds(2))
                recorder.record("child")
            }
        })
        let after = AsyncBlockOperation(name: "after") { recorder.record("after") }
        try after.addDependency(group)
        let queue = WorkQueue()
        try queue.addOperations([after, group])
        await waitForQueue(queue)
        XCTAssertEqual(recorder.events, Array(repeating: "child", count: 5) + ["after"])
    }

    // MARK: Injection

    func testBytesInjectedFromProducerToConsumer() async throws {
        let download = ResultOperation<[UInt8]>(name: "download") { Array(repeating: 7, count: 1024) }
        let checksum = TransformOperation<[UInt8], Int>(name: "checksum") { bytes in bytes.reduce(0) { $0 + Int($1) } }
        try checksum.injectResult(from: download)
        // A remote producer feeding another consumer.
        let remote = CompletableOperation<[UInt8]>(name: "remote download")
        let size = TransformOperation<[UInt8], Int>(name: "size") { $0.count }
        try size.injectResult(from: remote)
        let queue = WorkQueue()
        try queue.addOperations([download, checksum, remote, size])
        remote.complete(with: [1, 2, 3])
        await waitForQueue(queue)
        XCTAssertEqual(checksum.output, 7 * 1024)
        XCTAssertEqual(size.output, 3)

        // A cancelled producer cancels the consumer.
        let cancelledProducer = CompletableOperation<[UInt8]>(name: "cancelled producer")
        let consumer = TransformOperation<[UInt8], Int>(name: "consumer") { $0.count }
        try consumer.injectResult(from: cancelledProducer)
        try queue.addOperations([cancelledProducer, consumer])
        cancelledProducer.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(consumer.state, .cancelled)
        XCTAssertTrue(consumer.errors.first is InjectionError)

        // A producer finishing without output cancels the consumer too.
        let empty = NilProducer()
        let consumer2 = TransformOperation<[UInt8], Int>(name: "consumer2") { $0.count }
        try consumer2.injectResult(from: empty)
        try queue.addOperations([empty, consumer2])
        await waitForQueue(queue)
        XCTAssertEqual(empty.state, .finished)
        XCTAssertEqual(consumer2.state, .cancelled)
        guard case .missingResult(let dependency)? = consumer2.errors.first as? InjectionError else {
            return XCTFail("\(consumer2.errors)")
        }
        XCTAssertEqual(dependency, "nil producer")
    }

    func testInjectionFromAnAlreadyFinishedProducer() async throws {
        let producer = ResultOperation<String>(name: "early") { "value" }
        let queue = WorkQueue()
        try queue.addOperation(producer)
        await waitForQueue(queue)
        let consumer = TransformOperation<String, Int>(name: "late") { $0.count }
        try consumer.injectResult(from: producer)
        XCTAssertEqual(consumer.input, "value")
        try queue.addOperation(consumer)
        await waitForQueue(queue)
        XCTAssertEqual(consumer.output, 5)
    }

    // MARK: Conditions, timeout, retry

    func testMutualExclusionWithALimitPerCategory() async throws {
        let perHost = ["a.example": Gauge(), "b.example": Gauge()]
        let queue = WorkQueue()
        var operations: [AsyncOperation] = []
        for index in 0..<24 {
            let host = index % 2 == 0 ? "a.example" : "b.example"
            let gauge = perHost[host] ?? Gauge()
            let download = AsyncBlockOperation(name: "download\(index)") {
                gauge.enter()
                try await Task.sleep(for: .milliseconds(10))
                gauge.leave()
            }
            download.addCondition(MutualExclusion(category: "download:\(host)", limit: 3))
            operations.append(download)
        }
        try queue.addOperations(operations)
        await waitForQueue(queue)
        for (host, gauge) in perHost {
            XCTAssertEqual(gauge.total, 12, host)
            XCTAssertEqual(gauge.maximum, 3, "at most 3 downloads at once from \(host)")
        }
    }

    func testMutualExclusionWaiterCanBeCancelled() async throws {
        let holder = CompletableOperation<Int>(name: "holder")
        holder.addCondition(MutualExclusion(category: "exclusive-cancel"))
        let waiter = AsyncOperation(name: "waiter")
        waiter.addCondition(MutualExclusion(category: "exclusive-cancel"))
        let queue = WorkQueue()
        try queue.addOperation(holder)
        await eventually { holder.isExecuting }
        try queue.addOperation(waiter)
        try await Task.sleep(for: .milliseconds(10))
        XCTAssertEqual(waiter.state, .ready, "waiting for the category")
        waiter.cancel()
        await waitFor(waiter)
        XCTAssertEqual(waiter.state, .cancelled)
        holder.complete(with: 1)
        await waitForQueue(queue)
        XCTAssertEqual(MutualExclusion.holders(of: "exclusive-cancel"), 0)
    }

    func testBlockConditionAndNoFailedDependencies() async throws {
        let refused = AsyncOperation(name: "refused")
        refused.addCondition(BlockCondition(name: "disk space") { _ in false })
        let failing = AsyncBlockOperation(name: "failing") { throw TestError("x") }
        let guarded = AsyncOperation(name: "guarded")
        try guarded.addDependency(failing)
        guarded.addCondition(NoFailedDependencies())
        let allowed = AsyncOperation(name: "allowed")
        allowed.addCondition(BlockCondition { _ in true })
        let queue = WorkQueue()
        try queue.addOperations([refused, failing, guarded, allowed])
        await waitForQueue(queue)
        XCTAssertEqual(refused.state, .failed)
        XCTAssertEqual((refused.errors.first as? ConditionFailedError)?.condition, "disk space")
        XCTAssertEqual(guarded.state, .failed)
        XCTAssertTrue((guarded.errors.first as? ConditionFailedError)?.underlyingError is DependencyFailedError)
        XCTAssertEqual(allowed.state, .finished)
    }

    func testTimeout() async throws {
        let slow = AsyncBlockOperation(name: "slow") { try await Task.sleep(for: .seconds(30)) }
        slow.timeout = .milliseconds(30)
        let clock = ContinuousClock()
        let start = clock.now
        let queue = WorkQueue()
        try queue.addOperation(slow)
        await waitForQueue(queue)
        XCTAssertLessThan(clock.now - start, .seconds(5))
        XCTAssertEqual(slow.state, .failed)
        XCTAssertTrue(slow.errors.first is OperationTimeoutError, "\(slow.errors)")
    }

    func testRetryWithBackoff() async throws {
        let attempts = Gauge()
        let flaky = AsyncBlockOperation(name: "flaky") {
            attempts.enter()
            if attempts.total < 3 { throw TestError("transient") }
        }
        flaky.retryPolicy = RetryPolicy(maxAttempts: 5, initialDelay: .milliseconds(1), multiplier: 2)
        let hopeless = AsyncBlockOperation(name: "hopeless") { throw TestError("permanent") }
        hopeless.retryPolicy = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1))
        let queue = WorkQueue()
        try queue.addOperations([flaky, hopeless])
        await waitForQueue(queue)
        XCTAssertEqual(flaky.state, .finished)
        XCTAssertEqual(flaky.attempt, 3)
        XCTAssertEqual(hopeless.state, .failed)
        XCTAssertEqual(hopeless.attempt, 3)
        XCTAssertEqual(RetryPolicy(maxAttempts: 9, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(5)).delay(afterAttempt: 2), .seconds(2))
        XCTAssertEqual(RetryPolicy(maxAttempts: 9, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(5)).delay(afterAttempt: 8), .seconds(5))
    }

    // MARK: Queue

    func testConcurrencyLimitAndPriorities() async throws {
        let gauge = Gauge()
        let queue = WorkQueue(maxConcurrentOperationCount: 3)
        let operations = (0..<20).map { index in
            AsyncBlockOperation(name: "op\(index)") {
                gauge.enter()
                try await Task.sleep(for: .milliseconds(2))
                gauge.leave()
            }
        }
        try queue.addOperations(operations)
        await waitForQueue(queue)
        XCTAssertEqual(gauge.maximum, 3)

        let serial = WorkQueue(name: "serial", maxConcurrentOperationCount: 1)
        let blocker = CompletableOperation<Int>(name: "blocker")
        try serial.addOperation(blocker)
        await eventually { blocker.isExecuting }
        let recorder = Recorder()
        for priority in [OperationPriority.low, .normal, .veryLow, .veryHigh, .high, .normal] {
            serial.addOperation(name: "\(priority)", priority: priority) { recorder.record("\(priority)") }
        }
        blocker.complete(with: 0)
        await waitForQueue(serial)
        XCTAssertEqual(recorder.events, ["veryHigh", "high", "normal", "normal", "low", "veryLow"])
    }

    func testEdgesAcrossQueuesAndRaisingTheLimit() async throws {
        let recorder = Recorder()
        let network = WorkQueue(name: "network")
        let cpu = WorkQueue(name: "cpu", maxConcurrentOperationCount: 1)
        let download = CompletableOperation<[UInt8]>(name: "download")
        let filter = TransformOperation<[UInt8], Int>(name: "filter") { bytes in
            recorder.record("filter")
            return bytes.count
        }
        try filter.injectResult(from: download)
        try cpu.addOperation(filter)
        try network.addOperation(download)
        try await Task.sleep(for: .milliseconds(5))
        XCTAssertEqual(filter.state, .pending, "waits for an operation of another queue")
        download.complete(with: [1, 2])
        await waitForQueue(cpu)
        XCTAssertEqual(filter.output, 2)

        // Raising the limit starts waiting operations at once.
        let blockers = (0..<3).map { CompletableOperation<Int>(name: "blocker\($0)") }
        try cpu.addOperations(blockers)
        await eventually { blockers[0].isExecuting }
        XCTAssertEqual(blockers.filter(\.isExecuting).count, 1)
        cpu.maxConcurrentOperationCount = 3
        await eventually { blockers.allSatisfy(\.isExecuting) }
        for blocker in blockers { blocker.complete(with: 0) }
        await waitForQueue(cpu)
        await waitForQueue(network)
    }

    func testAlreadyEnqueuedIsRejected() throws {
        let operation = CompletableOperation<Int>(name: "once")
        let first = WorkQueue(), second = WorkQueue()
        try first.addOperation(operation)
        XCTAssertThrowsError(try second.addOperation(operation)) { error in
            XCTAssertEqual(error as? OperationUsageError, .alreadyEnqueued(operation: "once"))
        }
        XCTAssertEqual(second.operationCount, 0)
        XCTAssertThrowsError(try GroupOperation().addChild(operation))
        operation.cancel()
    }

    func testObserversAndCompletionHandlers() async throws {
        let recorder = Recorder()
        let operation = AsyncBlockOperation(name: "observed") { recorder.record("execute") }
        operation.addObserver(BlockObserver(
            willExecute: { _ in recorder.record("willExecute") },
            didFinish: { _, state, _ in recorder.record("didFinish \(state)") }
        ))
        operation.onCompletion { _ in recorder.record("completion") }
        let sink = ResultSink()
        let isolated = expectation(description: "actor-isolated completion")
        operation.onCompletion(isolatedTo: sink) { sink, operation in
            sink.assertIsolated()
            sink.append(operation.name)
            isolated.fulfill()
        }
        let queue = WorkQueue()
        try queue.addOperation(operation)
        await waitForQueue(queue)
        await fulfillment(of: [isolated], timeout: 10)
        XCTAssertEqual(recorder.events, ["willExecute", "execute", "didFinish finished", "completion"])
        let values = await sink.values
        XCTAssertEqual(values, ["observed"])

        let cancelled = AsyncOperation(name: "c")
        cancelled.addObserver(BlockObserver(didCancel: { _, errors in recorder.record("didCancel \(errors.count)") }))
        cancelled.cancel(error: TestError("x"))
        cancelled.cancel(error: TestError("y"))
        XCTAssertEqual(recorder.events.last, "didCancel 1")
        XCTAssertEqual(cancelled.errors.first as? TestError, TestError("x"))
    }

    func testLargeChainsAndFanIn() async throws {
        let counter = Gauge()
        let queue = WorkQueue()
        var all: [AsyncOperation] = []
        var previous: AsyncOperation?
        for index in 0..<5_000 {
            let operation = AsyncBlockOperation(name: "chain\(index)") { counter.enter() }
            if let previous { try operation.addDependency(previous) }
            previous = operation
            all.append(operation)
        }
        let sink = AsyncOperation(name: "sink")
        for index in 0..<5_000 {
            let source = AsyncBlockOperation(name: "source\(index)") { counter.enter() }
            try sink.addDependency(source)
            all.append(source)
        }
        all.append(sink)
        try queue.addOperations(all)
        await waitForQueue(queue, seconds: 60)
        XCTAssertEqual(counter.total, 10_000)
        XCTAssertEqual(sink.state, .finished)
    }
}
