import Wire
import XCTest

@testable import Cluster

/// The order of the tasks waiting for a slot: fair share between clients and batches, weighted by
/// priority, starvation-free; FIFO on demand.
final class FairShareQueueTests: XCTestCase {
    private func client(_ name: String) -> ClientIdentity {
        ClientIdentity(peer: PeerIdentity(Array(name.utf8)), key: nil)
    }

    private func drain(_ queue: inout FairShareQueue) -> [TaskKey] {
        var keys: [TaskKey] = []
        while let key = queue.dequeue() { keys.append(key) }
        return keys
    }

    /// Enqueues `count` tasks of `batch` with keys base+1… .
    private func fill(_ queue: inout FairShareQueue, batch: String, base: TaskKey, count: Int) {
        for offset in 1...count { queue.enqueue(base + TaskKey(offset), batch: batch) }
    }

    func testWithinABatchUrgentTasksGoFirstThenInOrderAndARequeuedTaskBeforeTheRest() {
        var queue = FairShareQueue()
        queue.enqueue(1, batch: "b")
        queue.enqueue(2, batch: "b")
        queue.enqueue(3, batch: "b", urgency: 1)
        queue.enqueue(4, batch: "b", front: true)
        XCTAssertEqual(drain(&queue), [3, 4, 1, 2])
        XCTAssertTrue(queue.isEmpty)
    }

    func testTasksArrivingOutOfOrderAreServedInKeyOrderWhichIsSubmissionOrder() {
        // Under FIFO one lane holds every batch: the big batch (keys 1…6, accepted first) before the small one
        // (keys 101…102), even when the engine starts some of the big batch's tasks after the small batch's.
        var queue = FairShareQueue(policy: .fifo)
        queue.register(batch: "big", as: ShareClass(client: client("alice"), priority: 0))
        queue.register(batch: "small", as: ShareClass(client: client("bob"), priority: 0))
        for key: TaskKey in [1, 2, 4] { queue.enqueue(key, batch: "big") }
        for key: TaskKey in [101, 102] { queue.enqueue(key, batch: "small") }
        for key: TaskKey in [6, 3, 5] { queue.enqueue(key, batch: "big") }
        queue.enqueue(50, batch: "big", front: true)  // its worker died: before the rest
        XCTAssertEqual(queue.dequeue(), 50)
        XCTAssertEqual(queue.dequeue(), 1)
        queue.enqueue(103, batch: "small")
        queue.enqueue(2_000, batch: "big", urgency: 1)  // more urgent: first
        XCTAssertEqual(drain(&queue), [2_000, 2, 3, 4, 5, 6, 101, 102, 103])
        XCTAssertTrue(queue.isEmpty)
    }

    func testASmallBatchBehindALargeOneIsServedAtOnceAndFinishesWithinTwiceItsSize() {
        var queue = FairShareQueue()
        queue.register(batch: "big", as: ShareClass(client: client("alice"), priority: 0))
        queue.register(batch: "small", as: ShareClass(client: client("bob"), priority: 0))
        fill(&queue, batch: "big", base: 0, count: 10_000)
        XCTAssertEqual(queue.dequeue(), 1)
        fill(&queue, batch: "small", base: 100_000, count: 10)
        let order = drain(&queue)
        XCTAssertEqual(order.count, 10_009)
        XCTAssertEqual(order.first, 100_001, "the small batch's first task goes next")
        let lastSmall = order.lastIndex { $0 > 100_000 } ?? .max
        XCTAssertLessThan(lastSmall, 20, "the batches alternate: the small one is done within 20 dispatches")
    }

    func testFIFOServesEveryTaskInTheOrderItBecameReady() {
        var queue = FairShareQueue(policy: .fifo)
        queue.register(batch: "big", as: ShareClass(client: client("alice"), priority: 0))
        queue.register(batch: "small", as: ShareClass(client: client("bob"), priority: 10))
        fill(&queue, batch: "big", base: 0, count: 1_000)
        fill(&queue, batch: "small", base: 100_000, count: 10)
        let order = drain(&queue)
        XCTAssertEqual(order, Array(1...1_000) + Array(100_001...100_010))
    }

    func testClientsShareEquallyWhateverTheirNumberOfBatches() {
        var queue = FairShareQueue()
        for batch in ["a1", "a2", "a3"] {
            queue.register(batch: batch, as: ShareClass(client: client("alice"), priority: 0))
        }
        queue.register(batch: "b1", as: ShareClass(client: client("bob"), priority: 0))
        fill(&queue, batch: "a1", base: 0, count: 1_000)
        fill(&queue, batch: "a2", base: 10_000, count: 1_000)
        fill(&queue, batch: "a3", base: 20_000, count: 1_000)
        fill(&queue, batch: "b1", base: 30_000, count: 1_000)
        let first = drain(&queue).prefix(600)
        let bob = first.filter { $0 > 30_000 }.count
        XCTAssertEqual(bob, 300, "bob gets half the dispatches")
        let perBatch = [0, 10_000, 20_000].map { base in first.filter { $0 > base && $0 <= base + 1_000 }.count }
        XCTAssertEqual(perBatch, [100, 100, 100], "alice's batches share her half")
    }

    func testPrioritiesShareAsTheirWeights() {
        var queue = FairShareQueue()
        queue.register(batch: "high", as: ShareClass(client: client("alice"), priority: 4))  // weight 128
        queue.register(batch: "normal", as: ShareClass(client: client("bob"), priority: 0))  // weight 32
        fill(&queue, batch: "high", base: 0, count: 5_000)
        fill(&queue, batch: "normal", base: 10_000, count: 5_000)
        let first = drain(&queue).prefix(1_000)
        let high = first.filter { $0 <= 5_000 }.count
        XCTAssertEqual(Double(high), 800, accuracy: 2, "4 points of priority: 4 times the share")
    }

    func testTheLowestPriorityProgressesBesideTheHighest() {
        var queue = FairShareQueue()
        queue.register(batch: "top", as: ShareClass(client: client("alice"), priority: BatchPriority.range.upperBound))
        queue.register(batch: "bottom", as: ShareClass(client: client("bob"), priority: BatchPriority.range.lowerBound))
        fill(&queue, batch: "top", base: 0, count: 20_000)
        fill(&queue, batch: "bottom", base: 100_000, count: 10)
        let order = drain(&queue)
        let served = order.indices.filter { order[$0] > 100_000 }
        XCTAssertEqual(served.count, 10)
        let gaps = zip(served.dropFirst(), served).map { $0 - $1 }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 1_026, "served at least once every 1,025 dispatches")
    }

    func testRemovedTasksAreSkippedAndEveryOtherTaskIsServedOnce() {
        var queue = FairShareQueue()
        var generator = SystemRandomNumberGenerator()
        var live = Set<TaskKey>()
        var next: TaskKey = 1
        for round in 0..<2_000 {
            let batch = "b\(Int.random(in: 0..<7, using: &generator))"
            if round % 3 == 0 {
                queue.register(
                    batch: batch, as: ShareClass(client: client(batch), priority: Int32.random(in: -10...10)))
            }
            queue.enqueue(next, batch: batch, urgency: Int.random(in: 0...1), front: Bool.random())
            live.insert(next)
            next += 1
            if Int.random(in: 0..<4) == 0, let victim = live.randomElement() {
                queue.remove(victim)
                live.remove(victim)
            }
            if Int.random(in: 0..<3) == 0, let key = queue.dequeue() {
                XCTAssertNotNil(live.remove(key), "only live tasks are served, once")
            }
            XCTAssertEqual(queue.count, live.count)
        }
        for key in drain(&queue) { XCTAssertNotNil(live.remove(key), "only live tasks are served, once") }
        XCTAssertTrue(live.isEmpty, "every live task was served")
        XCTAssertTrue(queue.removed.isEmpty)
    }
}
