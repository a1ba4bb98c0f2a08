@testable import Cluster
import Synchronization
import XCTest

final class CompletionInboxTests: XCTestCase {
    /// Events posted from many threads are all drained, in groups, with one scheduled drain per group.
    func testEveryEventIsDrainedOnceAndDrainsAreScheduledOncePerGroup() async {
        let inbox = CompletionInbox<Int>()
        let schedules = Atomic<Int>(0)
        let drained = Mutex<[Int]>([])
        let drains = Atomic<Int>(0)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 {
                        inbox.post(thread * 1_000 + index) {
                            schedules.add(1, ordering: .relaxed)
                            Task {
                                let events = inbox.drain()
                                drains.add(1, ordering: .relaxed)
                                drained.withLock { $0 += events }
                            }
                        }
                    }
                }
            }
        }
        // Whatever was posted after the last scheduled drain ran is picked up by a final drain.
        for _ in 0..<500 {
            if drained.withLock({ $0.count }) == 8_000, drains.load(ordering: .relaxed) == schedules.load(ordering: .relaxed) { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let all = drained.withLock { $0 } + inbox.drain()
        XCTAssertEqual(all.count, 8_000)
        XCTAssertEqual(Set(all).count, 8_000, "no event twice")
        XCTAssertLessThanOrEqual(schedules.load(ordering: .relaxed), 8_000)
        XCTAssertEqual(schedules.load(ordering: .relaxed), drains.load(ordering: .relaxed), "one drain per schedule")
        // Per posting thread, order is kept.
        for thread in 0..<8 {
            let mine = all.filter { $0 / 1_000 == thread }
            XCTAssertEqual(mine, mine.sorted())
        }
    }

    func testAPostAfterADrainSchedulesAgain() {
        let inbox = CompletionInbox<String>()
        var scheduled = 0
        inbox.post("a") { scheduled += 1 }
        inbox.post("b") { scheduled += 1 }
        XCTAssertEqual(scheduled, 1)
        XCTAssertEqual(inbox.drain(), ["a", "b"])
        inbox.post("c") { scheduled += 1 }
        XCTAssertEqual(scheduled, 2)
        XCTAssertEqual(inbox.drain(), ["c"])
        XCTAssertEqual(inbox.drain(), [])
    }
}
