import Operations
import Runtime
import XCTest

/// `ExternalOperation`: started synchronously, finished from outside without a Swift task waiting;
/// dependencies, injection, failure, cancellation, conditions and queue limits as for any operation.
final class ExternalOperationTests: XCTestCase {
    /// Finishing a step starts the next (its dependent, with the injected result) on the same thread,
    /// before `finish` returns: a chain advances without any task switch.
    func testFinishingStartsTheInjectedDependentOnTheSameThread() async throws {
        let (download, filter, queue) = try startChain()
        XCTAssertEqual(download.starts, 1, "started by the thread that added it, before addOperations returned")
        XCTAssertTrue(download.isExecuting)
        XCTAssertEqual(filter.starts, 0)

        download.succeed(with: "bytes")
        XCTAssertEqual(download.state, .finished)
        XCTAssertEqual(filter.starts, 1, "the dependent started before finish returned")
        XCTAssertEqual(filter.startedWithInput, "bytes", "its input was injected before it started")
        XCTAssertEqual(filter.startThread, download.finishThread, "on the finishing thread")

        filter.succeed(with: "image")
        XCTAssertEqual(filter.state, .finished)
        XCTAssertEqual(filter.output, "image")
        await waitForQueue(queue)
    }

    /// A failed step cancels its dependent with the cause, which never starts.
    func testFailureCancelsTheDependentWithTheCause() async throws {
        let (download, filter, queue) = try startChain()
        download.finish(throwing: TestError("404"))
        XCTAssertEqual(download.state, .failed)
        XCTAssertEqual(download.errors.first as? TestError, TestError("404"))
        XCTAssertEqual(filter.state, .cancelled)
        XCTAssertEqual(filter.starts, 0)
        let cause = try XCTUnwrap(filter.errors.first as? InjectionError)
        XCTAssertEqual(cause.underlyingErrors.first as? TestError, TestError("404"))
        await waitForQueue(queue)
    }

    /// Cancelling running work calls `cancelRunningWork` once; by default the operation finishes as
    /// cancelled at once, and a late result is ignored. A `CancellationError` from the work cancels it too.
    func testCancellingRunningWork() async throws {
        let remote = ProbeOperation(name: "remote")
        let queue = WorkQueue()
        try queue.addOperation(remote)
        XCTAssertTrue(remote.isExecuting)
        remote.cancel(error: TestError("withdrawn"))
        XCTAssertEqual(remote.state, .cancelled)
        XCTAssertEqual(remote.cancels, 1)
        XCTAssertEqual(remote.errors.first as? TestError, TestError("withdrawn"))
        remote.succeed(with: "late")
        XCTAssertEqual(remote.state, .cancelled, "the first finish wins")
        remote.cancel()
        XCTAssertEqual(remote.cancels, 1)

        let withdrawn = ProbeOperation(name: "withdrawn")
        try queue.addOperation(withdrawn)
        withdrawn.finish(throwing: CancellationError())
        XCTAssertEqual(withdrawn.state, .cancelled)

        // Not started yet (waiting for a dependency): cancelled by the engine, never started.
        let first = ProbeOperation(name: "first")
        let second = ProbeOperation(name: "second")
        try second.addDependency(first)
        try queue.addOperations([first, second])
        second.cancel()
        XCTAssertEqual(second.state, .cancelled)
        XCTAssertEqual(second.cancels, 0)
        first.succeed(with: "done")
        XCTAssertEqual(second.starts, 0)
        await waitForQueue(queue)
    }

    /// `finish` before `start()` (never enqueued, or waiting for a dependency) does nothing: the operation
    /// keeps waiting, starts when its turn comes and finishes then (checked under the lock that commits a
    /// finish, so no finish can slip in between).
    func testFinishBeforeStartDoesNothing() async throws {
        let loose = ProbeOperation(name: "loose")
        loose.finish(throwing: TestError("early"))
        XCTAssertEqual(loose.state, .pending)
        XCTAssertTrue(loose.errors.isEmpty)

        let first = ProbeOperation(name: "first")
        let second = ProbeOperation(name: "second")
        try second.addDependency(first)
        let queue = WorkQueue()
        try queue.addOperations([first, second])
        second.succeed(with: "too early")
        XCTAssertEqual(second.state, .pending)
        XCTAssertEqual(second.starts, 0)
        first.succeed(with: "done")
        XCTAssertEqual(second.starts, 1, "started in its turn")
        XCTAssertTrue(second.isExecuting)
        second.succeed(with: "in time")
        XCTAssertEqual(second.state, .finished)
        XCTAssertEqual(second.output, "in time")
        await waitForQueue(queue)
    }

    /// A queue's limit holds for external operations: each holds its slot until it finishes, and the
    /// finish starts the next one waiting, on the finishing thread.
    func testQueueLimitCountsRunningWork() async throws {
        let queue = WorkQueue(name: "window", maxConcurrentOperationCount: 2)
        let operations = (0..<5).map { ProbeOperation(name: "task \($0)") }
        try queue.addOperations(operations)
        XCTAssertEqual(operations.map(\.starts), [1, 1, 0, 0, 0])
        operations[1].succeed(with: "1")
        XCTAssertEqual(operations.map(\.starts), [1, 1, 1, 0, 0])
        operations[0].succeed(with: "0")
        operations[2].succeed(with: "2")
        XCTAssertEqual(operations.map(\.starts), [1, 1, 1, 1, 1])
        operations[3].succeed(with: "3")
        operations[4].succeed(with: "4")
        await waitForQueue(queue)
        XCTAssertTrue(operations.allSatisfy { $0.state == .finished })
    }

    /// Conditions are evaluated before the work starts: a mutual exclusion of one lets the second operation
    /// start only once the first finished.
    func testMutualExclusionHoldsUntilTheWorkFinishes() async throws {
        let first = ProbeOperation(name: "first")
        let second = ProbeOperation(name: "second")
        for operation in [first, second] {
            operation.addCondition(MutualExclusion(category: "external-test-host", limit: 1))
        }
        let queue = WorkQueue()
        try queue.addOperations([first, second])
        await eventually("one started") { first.starts + second.starts == 1 }
        let (running, waiting) = first.starts == 1 ? (first, second) : (second, first)
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(waiting.starts, 0, "the exclusion is held while the work runs")
        running.succeed(with: "done")
        await eventually("the other started") { waiting.starts == 1 }
        waiting.succeed(with: "done")
        await waitForQueue(queue)
    }

    /// An external operation whose only condition is a mutual exclusion needs no runner: it starts at once
    /// when a slot is free, else the finish that frees one starts it, on the finishing thread; one cancelled
    /// while it waits is passed over and takes no slot.
    func testAnExclusionAloneStartsTheNextWaiterOnTheFinishingThread() async throws {
        let category = "external-test-synchronous"
        let operations = (0..<3).map { ProbeOperation(name: "task \($0)") }
        for operation in operations { operation.addCondition(MutualExclusion(category: category, limit: 1)) }
        let queue = WorkQueue()
        try queue.addOperations(operations)
        XCTAssertEqual(operations.map(\.starts), [1, 0, 0], "the first started before addOperations returned")
        XCTAssertEqual(MutualExclusion.holders(of: category), 1)
        XCTAssertEqual(MutualExclusion.waiters(of: category), 2)

        operations[1].cancel()
        XCTAssertEqual(operations[1].state, .cancelled, "a waiting operation finishes at once when cancelled")
        operations[0].succeed(with: "done")
        XCTAssertEqual(
            operations.map(\.starts), [1, 0, 1], "the third started before finish returned; the cancelled one never")
        XCTAssertEqual(operations[2].startThread, operations[0].finishThread, "on the finishing thread")
        XCTAssertEqual(MutualExclusion.holders(of: category), 1)
        XCTAssertEqual(MutualExclusion.waiters(of: category), 0)

        operations[2].succeed(with: "done")
        XCTAssertEqual(MutualExclusion.holders(of: category), 0)
        await waitForQueue(queue)
    }

    /// A download and a tilt-shift into which its output is injected, added to a new queue.
    private func startChain() throws -> (download: ProbeOperation, filter: ProbeOperation, queue: WorkQueue) {
        let download = ProbeOperation(name: "download")
        let filter = ProbeOperation(name: "tilt-shift")
        try filter.injectResult(from: download)
        let queue = WorkQueue()
        try queue.addOperations([download, filter])
        return (download, filter, queue)
    }

    /// In a group with a window of children, the group finishes once its external children did, with
    /// their errors.
    func testGroupOfExternalChildren() async throws {
        let children = (0..<4).map { ProbeOperation(name: "child \($0)") }
        let group = GroupOperation(name: "batch", operations: children, maxConcurrentChildren: 2)
        let queue = WorkQueue()
        try queue.addOperation(group)
        await eventually("two children started") { children.map(\.starts).reduce(0, +) == 2 }
        for index in 0..<4 {
            await eventually("child \(index) started") { children[index].starts == 1 }
            if index == 2 {
                children[index].finish(throwing: TestError("child 2"))
            } else {
                children[index].succeed(with: "\(index)")
            }
        }
        await waitForQueue(queue)
        XCTAssertEqual(group.state, .failed)
        XCTAssertEqual(group.errors.compactMap { $0 as? TestError }, [TestError("child 2")])
    }
}

/// An external operation that records its starts and cancellations, and the thread of each.
final class ProbeOperation: ExternalOperation, ResultProducing, ResultConsuming, @unchecked Sendable {
    private struct Probe {
        var starts = 0
        var cancels = 0
        var input: String?
        var output: String?
        var startedWithInput: String?
        var startThread: UInt?
        var finishThread: UInt?
    }
    private let probe = LockedValue(Probe())

    var input: String? {
        get { probe.withLock { $0.input } }
        set { probe.withLock { $0.input = newValue } }
    }
    var output: String? { probe.withLock { $0.output } }
    var starts: Int { probe.withLock { $0.starts } }
    var cancels: Int { probe.withLock { $0.cancels } }
    var startedWithInput: String? { probe.withLock { $0.startedWithInput } }
    var startThread: UInt? { probe.withLock { $0.startThread } }
    var finishThread: UInt? { probe.withLock { $0.finishThread } }

    override func start() {
        let thread = currentThreadID()
        probe.withLock {
            $0.starts += 1
            $0.startedWithInput = $0.input
            $0.startThread = thread
        }
    }

    override func cancelRunningWork() {
        probe.withLock { $0.cancels += 1 }
        super.cancelRunningWork()
    }

    /// The work succeeded with `value`.
    func succeed(with value: String) {
        let thread = currentThreadID()
        probe.withLock {
            $0.output = value
            $0.finishThread = thread
        }
        finish()
    }
}

private func currentThreadID() -> UInt { UInt(pthread_self()) }
