import Dispatch
import Runtime
import XCTest

/// `StartGate`: starting and giving up race, and exactly one of them wins.
final class StartGateTests: XCTestCase {
    func testTheFirstCallWins() {
        let started = StartGate()
        XCTAssertTrue(started.start())
        XCTAssertFalse(started.giveUp(), "work that started cannot be given up")
        XCTAssertTrue(started.start(), "asking again does not change the answer")

        let givenUp = StartGate()
        XCTAssertTrue(givenUp.giveUp())
        XCTAssertFalse(givenUp.start(), "work given up never starts")
        XCTAssertFalse(givenUp.giveUp(), "nor is it given up twice")
    }

    func testRacingThreadsNeverBothWin() {
        for _ in 0..<2_000 {
            let gate = StartGate()
            let wins = LockedValue(0)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let won = index == 0 ? gate.start() : gate.giveUp()
                if won { wins.withLock { $0 += 1 } }
            }
            XCTAssertEqual(wins.withLock { $0 }, 1)
        }
    }
}
