import Dispatch
import Foundation
import Operations
import XCTest

/// A `WorkQueue` made with an executor: its operations, those that become ready after a dependency and the
/// children of its groups run there, and are resumed there after they wait.
final class QueueExecutorTests: XCTestCase {
    func testOperationsDependentsAndGroupChildrenRunOnTheQueuesExecutor() async throws {
        let executor = ThreadExecutor(name: "test queue exec")
        let queue = WorkQueue(name: "on an executor", executor: executor)
        XCTAssertIdentical(queue.executor, executor)
        let seen = LockedValue<[String]>([])
        let first = Self.recording("first", into: seen)
        let dependent = Self.recording("dependent", into: seen)
        try dependent.addDependency(first)
        let group = GroupOperation(name: "group", operations: [Self.recording("child", into: seen)])
        try queue.addOperations([first, dependent, group])
        await queue.waitUntilAllOperationsAreFinished()
        let lines = seen.withLock { $0 }.sorted()
        XCTAssertEqual(lines, [
            "child after: test queue exec", "child before: test queue exec",
            "dependent after: test queue exec", "dependent before: test queue exec",
            "first after: test queue exec", "first before: test queue exec",
        ])
    }

    func testAQueueWithoutAnExecutorRunsOnTheCooperativePool() async throws {
        let queue = WorkQueue(name: "on the pool")
        XCTAssertNil(queue.executor)
        let seen = LockedValue<[String]>([])
        try queue.addOperation(Self.recording("plain", into: seen))
        await queue.waitUntilAllOperationsAreFinished()
        let lines = seen.withLock { $0 }
        XCTAssertEqual(lines.count, 2)
        for line in lines { XCTAssertFalse(line.hasSuffix("test queue exec"), line) }
    }

    func testAnOperationOfAnotherQueueMadeReadyThereRunsOnItsOwnQueuesRunners() async throws {
        let executor = ThreadExecutor(name: "test queue exec")
        let onExecutor = WorkQueue(name: "on an executor", executor: executor)
        let onPool = WorkQueue(name: "on the pool")
        let seen = LockedValue<[String]>([])
        let first = Self.recording("first", into: seen)
        let second = Self.recording("second", into: seen)
        try second.addDependency(first)
        try onPool.addOperation(second)
        try onExecutor.addOperation(first)
        await onExecutor.waitUntilAllOperationsAreFinished()
        await onPool.waitUntilAllOperationsAreFinished()
        let lines = seen.withLock { $0 }
        XCTAssertEqual(lines.filter { $0.hasPrefix("first") }, ["first before: test queue exec", "first after: test queue exec"])
        // The finishing runner (on the executor) does not take the pool's operation over.
        for line in lines where line.hasPrefix("second") { XCTAssertFalse(line.hasSuffix("test queue exec"), line) }
    }

    func testTheExecutorIsLetGoOnceItsQueueIsGone() async throws {
        weak var released: ThreadExecutor?
        do {
            let executor = ThreadExecutor(name: "test released")
            released = executor
            let queue = WorkQueue(name: "short-lived", executor: executor)
            let seen = LockedValue<[String]>([])
            try queue.addOperations((0..<4).map { Self.recording("op \($0)", into: seen) })
            await queue.waitUntilAllOperationsAreFinished()
        }
        // Its runners held it while parked; they end once the queue is gone (an event, waited for, not timed).
        for _ in 0..<1_000 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertNil(released, "the queue's parked runners kept its executor (and its thread) alive")
    }

    /// An operation that notes the thread it runs on, before and after a wait that another thread ends.
    private static func recording(_ label: String, into seen: LockedValue<[String]>) -> AsyncOperation {
        AsyncBlockOperation(name: label) {
            let before = QueueExecutorTests.threadName()
            seen.withLock { $0.append("\(label) before: \(before)") }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume() }
            }
            let after = QueueExecutorTests.threadName()
            seen.withLock { $0.append("\(label) after: \(after)") }
        }
    }

    static func threadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
    }
}
