import XCTest

@testable import Cluster

/// The index of workers with free slots (no sockets): the most free slots first, ties in turn, a retry's
/// worker passed over, and every change of a worker's slots reflected.
final class FreeSlotIndexTests: XCTestCase {
    private func peer(_ name: String) -> PeerIdentity { PeerIdentity(Array(name.utf8)) }

    func testTheWorkerWithTheMostFreeSlotsIsPickedAndTakenOutAtZero() {
        var index = FreeSlotIndex()
        XCTAssertNil(index.next())
        XCTAssertTrue(index.isEmpty)
        index.set(peer("a"), freeSlots: 2)
        index.set(peer("b"), freeSlots: 5)
        index.set(peer("c"), freeSlots: 3)
        XCTAssertEqual(index.next(), peer("b"))
        index.set(peer("b"), freeSlots: 1)
        XCTAssertEqual(index.next(), peer("c"), "b has fewer free slots now")
        index.set(peer("c"), freeSlots: 0)
        XCTAssertEqual(index.freeSlots(of: peer("c")), 0)
        XCTAssertEqual(index.count, 2, "a worker with no free slot is not indexed")
        XCTAssertEqual(index.next(), peer("a"))
        index.remove(peer("a"))
        index.remove(peer("a"))
        XCTAssertEqual(index.next(), peer("b"))
        index.set(peer("b"), freeSlots: 0)
        XCTAssertTrue(index.isEmpty)
        XCTAssertNil(index.next())
    }

    func testTakingOneSlotAtATimeGoesRoundTiedWorkers() {
        var index = FreeSlotIndex()
        let workers = ["a", "b", "c"].map(peer)
        for worker in workers { index.set(worker, freeSlots: 2) }
        var picked: [PeerIdentity] = []
        while let next = index.next() {
            picked.append(next)
            index.set(next, freeSlots: index.freeSlots(of: next) - 1)
        }
        XCTAssertEqual(picked.count, 6, "every free slot once")
        XCTAssertEqual(Set(picked.prefix(3)), Set(workers), "each worker's first slot before anyone's second")
        XCTAssertEqual(Set(picked.suffix(3)), Set(workers))
    }

    func testAFreedSlotIsFoundWithoutLookingAtBusyWorkers() {
        var index = FreeSlotIndex()
        for number in 0..<1_000 { index.set(peer("w\(number)"), freeSlots: 0) }
        XCTAssertTrue(index.isEmpty, "busy workers are not indexed")
        index.set(peer("w500"), freeSlots: 1)
        XCTAssertEqual(index.next(), peer("w500"))
        XCTAssertEqual(index.count, 1)
    }

    func testTheAvoidedWorkerIsPassedOverUnlessItIsAlone() {
        var index = FreeSlotIndex()
        index.set(peer("a"), freeSlots: 4)
        XCTAssertEqual(index.next(avoiding: peer("a")), peer("a"), "alone: it gets the task anyway")
        index.set(peer("b"), freeSlots: 1)
        XCTAssertEqual(index.next(avoiding: peer("a")), peer("b"), "another worker, however loaded")
        index.set(peer("c"), freeSlots: 4)
        let pick = index.next(avoiding: peer("a"))
        XCTAssertEqual(pick, peer("c"), "a tie with as many free slots goes first")
        XCTAssertEqual(index.next(avoiding: peer("z")), index.next(), "avoiding an unknown worker changes nothing")
    }

    /// Random changes, checked after each against the plain rule: `next()` has the most free slots.
    func testRandomChangesKeepTheIndexTrue() {
        var index = FreeSlotIndex()
        var truth: [PeerIdentity: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        let workers = (0..<40).map { peer("w\($0)") }
        for _ in 0..<5_000 {
            let worker = workers.randomElement(using: &generator) ?? workers[0]
            let slots = Int.random(in: 0...8, using: &generator)
            index.set(worker, freeSlots: slots)
            truth[worker] = slots > 0 ? slots : nil
            XCTAssertEqual(index.count, truth.count)
            if let best = truth.values.max() {
                guard let next = index.next() else { return XCTFail("a worker has free slots") }
                XCTAssertEqual(truth[next], best)
            } else {
                XCTAssertNil(index.next())
            }
            XCTAssertEqual(index.freeSlots(of: worker), truth[worker] ?? 0)
        }
    }
}
