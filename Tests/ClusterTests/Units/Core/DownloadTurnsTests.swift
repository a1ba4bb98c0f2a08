import XCTest

@testable import Cluster

/// The per-host download cap as a value: places up to the limit, then lines by group served in turn.
final class DownloadTurnsTests: XCTestCase {
    private func waiter(_ batch: String, _ index: Int) -> DownloadTurns.Waiter {
        DownloadTurns.Waiter(batchID: batch, itemIndex: index)
    }

    func testPlacesUpToTheLimitThenTheGroupServedLeastRecentlyGoesNext() {
        var turns = DownloadTurns(limit: 2)
        XCTAssertTrue(turns.take("h", for: waiter("a", 0), group: "a"))
        XCTAssertTrue(turns.take("h", for: waiter("a", 1), group: "a"))
        XCTAssertFalse(turns.take("h", for: waiter("a", 2), group: "a"))
        XCTAssertFalse(turns.take("h", for: waiter("a", 3), group: "a"))
        XCTAssertFalse(turns.take("h", for: waiter("b", 0), group: "b"))
        XCTAssertTrue(turns.take("other", for: waiter("b", 1), group: "b"), "another host has places of its own")
        XCTAssertEqual(turns.giveBack("h"), waiter("b", 0), "b was never served at h: its turn")
        XCTAssertEqual(turns.giveBack("h"), waiter("a", 2))
        XCTAssertEqual(turns.giveBack("h"), waiter("a", 3))
        XCTAssertNil(turns.giveBack("h"))
        XCTAssertEqual(turns.running(at: "h"), 1)
    }

    func testAWaiterThatLeavesIsNotServedAndOneLineKeepsTheOrderTheyCame() {
        var turns = DownloadTurns(limit: 1)
        XCTAssertTrue(turns.take("h", for: waiter("a", 0), group: ""))
        XCTAssertFalse(turns.take("h", for: waiter("b", 0), group: ""))
        XCTAssertFalse(turns.take("h", for: waiter("a", 1), group: ""))
        XCTAssertTrue(turns.leave("h", waiter("b", 0), group: ""))
        XCTAssertFalse(turns.leave("h", waiter("b", 0), group: ""), "once")
        XCTAssertEqual(turns.giveBack("h"), waiter("a", 1))
        XCTAssertNil(turns.giveBack("h"))
        XCTAssertEqual(turns.running(at: "h"), 0)
    }
}
