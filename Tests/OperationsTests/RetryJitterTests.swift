import Operations
import XCTest

/// The engine's retry maths with full jitter and a separate cap for requested waits.
final class RetryJitterTests: XCTestCase {
    func testFullJitterWaitsARandomPartOfTheBackoff() {
        var policy = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(10))
        XCTAssertEqual(
            policy.delay(afterAttempt: 3, requested: nil, fraction: 0.25), .seconds(4), "no jitter: all of it")
        policy.jitter = .full
        XCTAssertEqual(policy.delay(afterAttempt: 3, requested: nil, fraction: 0.25), .seconds(1))
        XCTAssertEqual(
            policy.delay(afterAttempt: 3, requested: nil, fraction: 7), .seconds(4), "the fraction is clamped to 0...1")
        for _ in 0..<100 {
            let delay = policy.delay(afterAttempt: 2, error: CancellationError())
            XCTAssertTrue(delay >= .zero && delay <= .seconds(2), "\(delay)")
        }
    }

    func testARequestedWaitIsHonouredUpToItsOwnCap() {
        var policy = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(10))
        policy.jitter = .full
        XCTAssertEqual(
            policy.delay(afterAttempt: 1, requested: .seconds(60), fraction: 0.5), .seconds(10), "capped at maxDelay")
        policy.maxRequestedDelay = .seconds(300)
        XCTAssertEqual(policy.delay(afterAttempt: 1, requested: .seconds(60), fraction: 0.5), .seconds(60))
        XCTAssertEqual(policy.delay(afterAttempt: 1, requested: .seconds(9_999), fraction: 0.5), .seconds(300))
        XCTAssertEqual(
            policy.delay(afterAttempt: 1, requested: .zero, fraction: 0.5), .milliseconds(500),
            "a wait in the past leaves the backoff")
    }
}
