import Messaging
import XCTest

@testable import Cluster

/// `CoordinatorWatch`: connection events and passive refusals in, "turn now" out, with no socket and a
/// clock the test moves by hand.
final class CoordinatorWatchTests: XCTestCase {
    private let start = ContinuousClock.now
    private let endpoint = "tcp://127.0.0.1:5570"

    private func watch(endpoints: Int = 2) -> CoordinatorWatch {
        CoordinatorWatch(
            endpointCount: endpoints, silenceTimeout: .seconds(5), passiveBackOff: .seconds(1), now: start)
    }

    func testASocketThatNeverConnectsTurnsAfterTheSilenceTimeout() {
        let watch = watch()
        XCTAssertEqual(watch.verdict(now: start + .seconds(4)), .stay)
        XCTAssertEqual(watch.verdict(now: start + .seconds(5)), .turn(.silent(for: .seconds(5))))
    }

    func testALiveConnectionNeverTurnsHoweverQuiet() {
        var watch = watch()
        watch.connection(.live(endpoint: endpoint), now: start + .seconds(1))
        XCTAssertTrue(watch.isLive)
        XCTAssertEqual(watch.verdict(now: start + .seconds(3_600)), .stay)
    }

    func testALostConnectionTurnsWhenItStaysLostForTheSilenceTimeout() {
        var watch = watch()
        watch.connection(.live(endpoint: endpoint), now: start)
        watch.connection(.lost(endpoint: endpoint), now: start + .seconds(10))
        XCTAssertEqual(watch.verdict(now: start + .seconds(14)), .stay)
        XCTAssertEqual(watch.verdict(now: start + .seconds(15)), .turn(.silent(for: .seconds(5))))
    }

    func testAConnectionBackInTimeKeepsTheCoordinator() {
        var watch = watch()
        watch.connection(.live(endpoint: endpoint), now: start)
        watch.connection(.lost(endpoint: endpoint), now: start + .seconds(10))
        watch.connection(.live(endpoint: endpoint), now: start + .seconds(12))
        XCTAssertEqual(watch.verdict(now: start + .seconds(60)), .stay)
        // Lost again: the silence counts from the second loss, not the first.
        watch.connection(.lost(endpoint: endpoint), now: start + .seconds(61))
        XCTAssertEqual(watch.verdict(now: start + .seconds(65)), .stay)
        XCTAssertEqual(watch.verdict(now: start + .seconds(66)), .turn(.silent(for: .seconds(5))))
    }

    func testARepeatedLossDoesNotMoveTheStartOfTheSilence() {
        var watch = watch()
        watch.connection(.live(endpoint: endpoint), now: start)
        watch.connection(.lost(endpoint: endpoint), now: start + .seconds(1))
        watch.connection(.lost(endpoint: endpoint), now: start + .seconds(4))
        XCTAssertEqual(watch.verdict(now: start + .seconds(6)), .turn(.silent(for: .seconds(5))))
    }

    func testTurningStartsTheSilenceAgainOnTheNewSocket() {
        var watch = watch()
        XCTAssertEqual(watch.verdict(now: start + .seconds(5)), .turn(.silent(for: .seconds(5))))
        watch.turned(now: start + .seconds(5))
        XCTAssertEqual(watch.verdict(now: start + .seconds(9)), .stay)
        XCTAssertEqual(watch.verdict(now: start + .seconds(10)), .turn(.silent(for: .seconds(5))))
    }

    func testAPassiveRefusalTurnsAtOnceEvenOnALiveConnection() {
        var watch = watch()
        watch.connection(.live(endpoint: endpoint), now: start)
        watch.refusedAsPassive(now: start + .seconds(1))
        XCTAssertEqual(watch.verdict(now: start + .seconds(1)), .turn(.passive))
    }

    func testWhenTheWholeListSaidPassiveTheNextTurnWaitsTheBackOff() {
        var watch = watch(endpoints: 2)
        watch.refusedAsPassive(now: start)
        XCTAssertEqual(watch.verdict(now: start), .turn(.passive))
        watch.turned(now: start)
        watch.refusedAsPassive(now: start + .milliseconds(10))
        XCTAssertEqual(watch.verdict(now: start + .milliseconds(10)), .stay, "both said passive: the pair is settling")
        XCTAssertEqual(watch.verdict(now: start + .milliseconds(1_010)), .turn(.passive))
        watch.turned(now: start + .milliseconds(1_010))
        // The next round starts at once again.
        watch.refusedAsPassive(now: start + .seconds(2))
        XCTAssertEqual(watch.verdict(now: start + .seconds(2)), .turn(.passive))
    }

    func testAnAnswerBetweenPassiveRefusalsStartsTheCountAgain() {
        var watch = watch(endpoints: 2)
        watch.refusedAsPassive(now: start)
        watch.turned(now: start)
        watch.answered()
        watch.refusedAsPassive(now: start + .seconds(1))
        XCTAssertEqual(watch.verdict(now: start + .seconds(1)), .turn(.passive), "one passive in a row: at once")
    }

    func testSeveralRefusalsBeforeTheTurnCountOnce() {
        var watch = watch(endpoints: 2)
        watch.refusedAsPassive(now: start)
        watch.refusedAsPassive(now: start)
        watch.refusedAsPassive(now: start)
        XCTAssertEqual(watch.verdict(now: start), .turn(.passive))
        watch.turned(now: start)
        watch.answered()
        watch.refusedAsPassive(now: start)
        XCTAssertEqual(watch.verdict(now: start), .turn(.passive))
    }
}
