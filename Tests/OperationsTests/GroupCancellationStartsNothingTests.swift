import Operations
import XCTest

/// Cancelling a group starts none of its waiting children: neither in the slot of the group's window that
/// a cancelled running child frees, nor in the `MutualExclusion` slot it gives back (a batch cancelled with
/// downloads running and others waiting for their host's cap). Another group's waiter gets that slot.
final class GroupCancellationStartsNothingTests: XCTestCase {
    func testAFreedWindowSlotStartsNoWaitingChildOfACancelledGroup() async throws {
        let children = (0..<3).map { ProbeOperation(name: "child \($0)") }
        let group = GroupOperation(name: "batch", operations: children, maxConcurrentChildren: 1)
        let queue = WorkQueue()
        try queue.addOperation(group)
        await eventually("the first child started") { children[0].starts == 1 }

        group.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(children.map(\.state), [.cancelled, .cancelled, .cancelled])
        XCTAssertEqual(children.map(\.starts), [1, 0, 0], "the waiting children never started")
    }

    func testAFreedExclusionSlotGoesToAnotherGroupNotToAWaiterOfTheCancelledOne() async throws {
        let category = "group-cancel-exclusion"
        let cancelled = (0..<2).map { ProbeOperation(name: "cancelled \($0)") }
        let other = ProbeOperation(name: "other")
        for operation in cancelled + [other] { operation.addCondition(MutualExclusion(category: category, limit: 1)) }
        let doomed = GroupOperation(name: "doomed batch", operations: cancelled)
        let queue = WorkQueue()
        try queue.addOperation(doomed)
        await eventually("the first child holds the slot") { cancelled[0].starts == 1 }
        await eventually("the second waits for it") { MutualExclusion.waiters(of: category) == 1 }
        try queue.addOperation(other)
        await eventually("another batch's child waits behind it") { MutualExclusion.waiters(of: category) == 2 }

        doomed.cancel()
        await eventually("the other batch's child got the slot") { other.starts == 1 }
        XCTAssertEqual(cancelled.map(\.starts), [1, 0], "the cancelled batch's waiter never started")
        XCTAssertEqual(cancelled.map(\.state), [.cancelled, .cancelled])
        other.succeed(with: "done")
        await waitForQueue(queue)
        XCTAssertEqual(MutualExclusion.holders(of: category), 0)
    }
}
