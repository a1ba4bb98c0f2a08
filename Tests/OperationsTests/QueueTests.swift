import Operations
import XCTest

/// Queues: concurrency limits, priorities, edges across queues, one queue per operation, large graphs.
final class QueueTests: XCTestCase {
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
        let first = WorkQueue()
        let second = WorkQueue()
        try first.addOperation(operation)
        XCTAssertThrowsError(try second.addOperation(operation)) { error in
            XCTAssertEqual(error as? OperationUsageError, .alreadyEnqueued(operation: "once"))
        }
        XCTAssertEqual(second.operationCount, 0)
        XCTAssertThrowsError(try GroupOperation().addChild(operation))
        operation.cancel()
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
