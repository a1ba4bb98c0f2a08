import Operations
import XCTest

/// An operation cancelled while it waits for a `MutualExclusion` slot (a download waiting for its host's
/// cap when its batch is cancelled) leaves the exclusion's queue at once: no longer counted as waiting,
/// no longer held by the exclusion, and the waiters behind it keep their order.
final class ExclusionWaiterCancellationTests: XCTestCase {
    func testACancelledWaiterLeavesTheQueueAtOnceAndIsLetGo() async throws {
        let category = "exclusion-cancel-at-once"
        let holder = ProbeOperation(name: "holder")
        let next = ProbeOperation(name: "next")
        var doomed: ProbeOperation? = ProbeOperation(name: "cancelled")
        weak var letGo = doomed
        for operation in [holder, doomed, next].compactMap({ $0 }) {
            operation.addCondition(MutualExclusion(category: category, limit: 1))
        }
        let queue = WorkQueue()
        // One at a time: operations added together are the queue's until the last of them finishes.
        for operation in [holder, doomed, next].compactMap({ $0 }) { try queue.addOperation(operation) }
        XCTAssertEqual(holder.starts, 1)
        XCTAssertEqual(MutualExclusion.waiters(of: category), 2)

        doomed?.cancel()
        XCTAssertEqual(doomed?.state, .cancelled)
        XCTAssertEqual(MutualExclusion.waiters(of: category), 1, "out of the count at once, not when its turn comes")
        doomed = nil
        XCTAssertNil(letGo, "nothing holds the cancelled operation while the holder still runs")

        holder.succeed(with: "done")
        XCTAssertEqual(next.starts, 1, "the next waiter gets the slot")
        XCTAssertEqual(MutualExclusion.waiters(of: category), 0)
        next.succeed(with: "done")
        XCTAssertEqual(MutualExclusion.holders(of: category), 0)
        await waitForQueue(queue)
    }

    /// Most of many waiters cancelled (their IDs compacted away on the way): the rest are served in order,
    /// one at a time, and each slot is released.
    func testTheWaitersLeftAfterManyCancelsAreServedInOrder() async throws {
        let category = "exclusion-cancel-many"
        let holder = ProbeOperation(name: "holder")
        let waiters = (0..<400).map { ProbeOperation(name: "waiter \($0)") }
        for operation in [holder] + waiters { operation.addCondition(MutualExclusion(category: category, limit: 1)) }
        let queue = WorkQueue()
        try queue.addOperations([holder] + waiters)
        for (index, waiter) in waiters.enumerated() where index % 4 != 0 { waiter.cancel() }
        XCTAssertEqual(MutualExclusion.waiters(of: category), 100)

        holder.succeed(with: "done")
        for index in stride(from: 0, to: waiters.count, by: 4) {
            XCTAssertEqual(waiters[index].starts, 1, "waiter \(index) in its turn")
            XCTAssertEqual(MutualExclusion.holders(of: category), 1)
            XCTAssertEqual(MutualExclusion.waiters(of: category), (waiters.count - index) / 4 - 1)
            waiters[index].succeed(with: "done")
        }
        XCTAssertEqual(waiters.map(\.starts).reduce(0, +), 100, "no cancelled waiter ever started")
        XCTAssertEqual(MutualExclusion.holders(of: category), 0)
        await waitForQueue(queue)
    }
}
