import Foundation
import Operations
import XCTest

/// Conditions: mutual exclusion, block conditions, no failed dependencies.
final class ConditionTests: XCTestCase {
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

    func testMutualExclusionGroupsTakeTurnsWhileWaitersOfOneGroupAreServedInOrder() async throws {
        let category = "turns-\(UUID().uuidString)"
        let holder = CompletableOperation<Int>(name: "holder")
        holder.addCondition(MutualExclusion(category: category))
        let queue = WorkQueue()
        try queue.addOperation(holder)
        await eventually { holder.isExecuting }
        let order = LockedLog()
        func waiter(_ name: String, group: String) -> AsyncOperation {
            let operation = AsyncBlockOperation(name: name) { order.append(name) }
            operation.addCondition(MutualExclusion(category: category, group: group))
            return operation
        }
        for index in 0..<20 {  // one at a time, so that they wait in this order; the big group first
            try queue.addOperation(waiter("big-\(index)", group: "big"))
            await eventually { MutualExclusion.waiters(of: category) == index + 1 }
        }
        let small = (0..<2).map { waiter("small-\($0)", group: "small") }
        try queue.addOperations(small)
        await eventually { MutualExclusion.waiters(of: category) == 22 }
        holder.complete(with: 1)
        await waitForQueue(queue)
        let served = order.entries
        XCTAssertEqual(served.count, 22)
        XCTAssertEqual(served.filter { $0.hasPrefix("big") }, (0..<20).map { "big-\($0)" }, "in order within a group")
        let lastSmall = served.lastIndex { $0.hasPrefix("small") } ?? .max
        XCTAssertLessThan(lastSmall, 6, "the groups take turns: \(served)")
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
}

/// Names appended from several operations, in order.
private final class LockedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []

    func append(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        names.append(name)
    }

    var entries: [String] {
        lock.lock()
        defer { lock.unlock() }
        return names
    }
}
