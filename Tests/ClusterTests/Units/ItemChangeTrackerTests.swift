import Wire
import XCTest

@testable import Cluster

/// What a batch's event stream sends of its items (`ItemChangeTracker`): all of them first, then only
/// those whose fields changed, and the whole list again when items went missing.
final class ItemChangeTrackerTests: XCTestCase {
    private func items(_ states: [String]) -> [ItemStatus] {
        states.enumerated().map {
            ItemStatus(itemIndex: UInt32($0.offset), source: "http://h/\($0.offset).jpg", state: $0.element)
        }
    }

    func testTheFirstEventHasEveryItemThenOnlyThoseThatChanged() {
        var tracker = ItemChangeTracker()
        var list = items(["queued", "queued", "running"])
        let first = tracker.changes(in: list)
        XCTAssertEqual(first.changed, list)
        XCTAssertTrue(first.complete)

        let same = tracker.changes(in: list)
        XCTAssertEqual(same.changed, [])
        XCTAssertFalse(same.complete)

        list[2].state = "failed"
        list[2].error = "HTTP 404"
        list[0].failedAttempts = [AttemptStatus(task: "download", attempt: 1, code: .download, retried: true)]
        let changed = tracker.changes(in: list)
        XCTAssertEqual(changed.changed.map(\.itemIndex), [0, 2])
        XCTAssertFalse(changed.complete)

        // A field of an attempt counts too.
        list[0].failedAttempts[0].worker = "w2"
        XCTAssertEqual(tracker.changes(in: list).changed.map(\.itemIndex), [0])

        // Items added (a manifest's): only they are new.
        list += [ItemStatus(itemIndex: 3, source: "http://h/3.jpg", state: "queued")]
        let added = tracker.changes(in: list)
        XCTAssertEqual(added.changed.map(\.itemIndex), [3])
        XCTAssertFalse(added.complete)
    }

    func testFewerItemsThanSentReplacesTheList() {
        var tracker = ItemChangeTracker()
        _ = tracker.changes(in: items(["succeeded", "succeeded", "failed"]))
        let fewer = items(["succeeded", "succeeded"])
        let replaced = tracker.changes(in: fewer)
        XCTAssertTrue(replaced.complete)
        XCTAssertEqual(replaced.changed, fewer)
        XCTAssertEqual(tracker.changes(in: fewer).changed, [])
    }
}
