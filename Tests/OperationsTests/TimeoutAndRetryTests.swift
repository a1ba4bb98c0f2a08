import Operations
import XCTest

/// Timeouts and retries with backoff.
final class TimeoutAndRetryTests: XCTestCase {
    func testTimeout() async throws {
        let slow = AsyncBlockOperation(name: "slow") { try await Task.sleep(for: .seconds(30)) }
        slow.timeout = .milliseconds(30)
        let clock = ContinuousClock()
        let start = clock.now
        let queue = WorkQueue()
        try queue.addOperation(slow)
        await waitForQueue(queue)
        XCTAssertLessThan(clock.now - start, .seconds(5))
        XCTAssertEqual(slow.state, .failed)
        XCTAssertTrue(slow.errors.first is OperationTimeoutError, "\(slow.errors)")
    }

    func testRetryWithBackoff() async throws {
        let attempts = Gauge()
        let flaky = AsyncBlockOperation(name: "flaky") {
            attempts.enter()
            if attempts.total < 3 { throw TestError("transient") }
        }
        flaky.retryPolicy = RetryPolicy(maxAttempts: 5, initialDelay: .milliseconds(1), multiplier: 2)
        let hopeless = AsyncBlockOperation(name: "hopeless") { throw TestError("permanent") }
        hopeless.retryPolicy = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1))
        let queue = WorkQueue()
        try queue.addOperations([flaky, hopeless])
        await waitForQueue(queue)
        XCTAssertEqual(flaky.state, .finished)
        XCTAssertEqual(flaky.attempt, 3)
        XCTAssertEqual(hopeless.state, .failed)
        XCTAssertEqual(hopeless.attempt, 3)
        XCTAssertEqual(
            RetryPolicy(maxAttempts: 9, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(5)).delay(
                afterAttempt: 2), .seconds(2))
        XCTAssertEqual(
            RetryPolicy(maxAttempts: 9, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(5)).delay(
                afterAttempt: 8), .seconds(5))
    }
}
