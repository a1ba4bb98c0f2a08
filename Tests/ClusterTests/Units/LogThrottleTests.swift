import XCTest

@testable import Cluster

/// A flood of one kind of log event is cut to a few lines per window, plus one line counting the rest.
final class LogThrottleTests: XCTestCase {
    func testTheFirstFewPerWindowAreLoggedAndTheRestCounted() {
        var throttle = LogThrottle(burst: 3, window: .seconds(10))
        let start = ContinuousClock.now
        let admitted = (0..<1_000).filter { _ in throttle.admit("malformed", now: start) }.count
        XCTAssertEqual(admitted, 3)
        XCTAssertTrue(throttle.admit("other event", now: start), "each event has its own window")
        XCTAssertEqual(throttle.expired(now: start + .seconds(5)), [], "the window has not ended")
        XCTAssertEqual(
            throttle.expired(now: start + .seconds(10)),
            [LogThrottle.Suppressed(event: "malformed", count: 997)])
        // After the count was handed out, the event starts a fresh window.
        XCTAssertTrue(throttle.admit("malformed", now: start + .seconds(11)))
        XCTAssertEqual(throttle.expired(now: start + .seconds(30)), [], "nothing was suppressed in that window")
    }

    func testAWindowWithSuppressedEventsIsReportedBeforeItStartsAgain() {
        var throttle = LogThrottle(burst: 1, window: .seconds(10))
        let start = ContinuousClock.now
        XCTAssertTrue(throttle.admit("e", now: start))
        XCTAssertFalse(throttle.admit("e", now: start + .seconds(1)))
        // Past the window but not reported yet: still suppressed, so that the count is not lost.
        XCTAssertFalse(throttle.admit("e", now: start + .seconds(12)))
        XCTAssertEqual(throttle.expired(now: start + .seconds(12)), [LogThrottle.Suppressed(event: "e", count: 2)])
    }
}
