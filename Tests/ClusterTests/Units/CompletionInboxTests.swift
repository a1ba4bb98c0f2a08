@testable import Cluster
import Runtime
import Synchronization
import XCTest

private final class Counters: Sendable {
    let schedules = Atomic<Int>(0)
    let drains = Atomic<Int>(0)
    let drained = InlineLock<[Int]>([])
}

final class CompletionInboxTests: XCTestCase {
    /// Events posted from many threads are all drained, in groups, with one scheduled drain per group.
    func testEveryEventIsDrainedOnceAndDrainsAreScheduledOncePerGroup() async {
        let inbox = CompletionInbox<Int>()
        let counters = Counters()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 {
                        inbox.post(thread * 1_000 + index) {
                            counters.schedules.add(1, ordering: .relaxed)
                            Task {
                                let events = inbox.drain()
                                counters.drains.add(1, ordering: .relaxed)
                                counters.drained.withLock { $0 += events }
                            }
                        }
                    }
                }
            }
        }
        // Whatever was posted after the last scheduled drain ran is picked up by a final drain.
        for _ in 0..<500 {
            if counters.drained.withLock({ $0.count }) == 8_000, counters.drains.load(ordering: .relaxed) == counters.schedules.load(ordering: .relaxed) { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let all = counters.drained.withLock { $0 } + inbox.drain()
        XCTAssertEqual(all.count, 8_000)
        XCTAssertEqual(Set(all).count, 8_000, "no event twice")
        XCTAssertLessThanOrEqual(counters.schedules.load(ordering: .relaxed), 8_000)
        XCTAssertEqual(counters.schedules.load(ordering: .relaxed), counters.drains.load(ordering: .relaxed), "one drain per schedule")
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

    /// While its owner drains it, a post schedules nothing; after `ownerDrains` is set back, the next post
    /// schedules again, once the owner's final drain emptied the inbox.
    func testNothingIsScheduledWhileTheOwnerDrains() {
        let inbox = CompletionInbox<String>()
        var scheduled = 0
        inbox.ownerDrains = true
        inbox.post("a") { scheduled += 1 }
        inbox.post("b") { scheduled += 1 }
        XCTAssertEqual(scheduled, 0)
        inbox.ownerDrains = false
        XCTAssertEqual(inbox.drain(), ["a", "b"])
        inbox.post("c") { scheduled += 1 }
        XCTAssertEqual(scheduled, 1)
        XCTAssertEqual(inbox.drain(), ["c"])
    }

    /// A drained array handed back (`recycle`) holds none of its old events: the next drains return what was
    /// posted since, in order, once each, whether the array was handed back before or after those posts.
    func testARecycledDrainBringsBackNoEvent() {
        let inbox = CompletionInbox<String>()
        for index in 0..<100 { inbox.post("first \(index)") {} }
        let first = inbox.drain()
        XCTAssertEqual(first.count, 100)
        inbox.post("posted before the hand-back") {}
        inbox.recycle(first)
        XCTAssertEqual(inbox.drain(), ["posted before the hand-back"])
        inbox.post("a") {}
        inbox.post("b") {}
        XCTAssertEqual(inbox.drain(), ["a", "b"], "the array handed back took the drained one's place, empty")
        inbox.recycle([])
        inbox.post("c") {}
        XCTAssertEqual(inbox.drain(), ["c"])
        XCTAssertEqual(inbox.drain(), [])
    }

    /// A burst's storage is kept for the next burst only up to `largestSpare` events: a rare huge burst's
    /// array is freed, not held for the life of the process.
    func testTheStorageOfAHugeBurstIsNotKept() {
        let inbox = CompletionInbox<Int>()
        for index in 0..<100 { inbox.post(index) {} }
        inbox.recycle(inbox.drain())
        XCTAssertEqual(inbox.drain(), [], "this drain puts the handed-back storage in place")
        inbox.post(0) {}
        XCTAssertGreaterThanOrEqual(inbox.drain().capacity, 100, "a burst's storage is reused")
        let huge = CompletionInbox<Int>.largestSpare * 2
        for index in 0..<huge { inbox.post(index) {} }
        inbox.recycle(inbox.drain())
        XCTAssertEqual(inbox.drain(), [])
        inbox.post(0) {}
        XCTAssertLessThan(inbox.drain().capacity, huge, "the huge burst's storage was freed")
    }
}
