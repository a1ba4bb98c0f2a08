import XCTest

@testable import Cluster

/// The pair's failover rules (`CoordinatorPair`), driven event by event without sockets: a primary `a`
/// and a backup `b`, announcements carried by hand (or not, for a broken link), requests and time.
final class CoordinatorPairTests: XCTestCase {
    private let timeout = Duration.seconds(3)
    private var now = ContinuousClock.now

    private func pair(
        _ role: PairRole, history: PairHistory = .none, position: JournalPosition = .empty
    ) -> CoordinatorPair {
        CoordinatorPair(role: role, failoverTimeout: timeout, history: history, position: position, now: now)
    }

    /// `to` hears `from`'s announcement.
    @discardableResult
    private func announce(_ from: CoordinatorPair, to: inout CoordinatorPair) -> [PairEffect] {
        to.handle(.peerAnnounced(from.announcement), now: now)
    }

    /// Both hear each other, `rounds` times.
    private func exchange(_ a: inout CoordinatorPair, _ b: inout CoordinatorPair, rounds: Int = 2) {
        for _ in 0..<rounds {
            announce(a, to: &b)
            announce(b, to: &a)
        }
    }

    private func wait(_ duration: Duration) { now += duration }

    private func becameActive(_ effects: [PairEffect]) -> Bool {
        effects.contains { if case .becomeActive = $0 { true } else { false } }
    }

    private func refused(_ effects: [PairEffect]) -> String? {
        for effect in effects { if case .refuse(let reason) = effect { return reason } }
        return nil
    }

    private func misconfigured(_ effects: [PairEffect]) -> String? {
        for effect in effects { if case .misconfigured(let reason) = effect { return reason } }
        return nil
    }

    // MARK: - Starting

    func testAFreshPairStartedTogetherSettlesWithThePrimaryActive() {
        var a = pair(.primary)
        var b = pair(.backup)
        exchange(&a, &b)
        XCTAssertEqual(a.state, .active)
        XCTAssertEqual(b.state, .passive)
        XCTAssertEqual(a.history, .activeAlone, "alone until the backup has caught up")
        XCTAssertEqual(a.handle(.peerCaughtUp, now: now), [.record(.activeWithPeer)])
        XCTAssertTrue(a.announcement.peerInStep)
        XCTAssertEqual(b.history, .passive)
        XCTAssertEqual(a.position.term, 0, "leading a pair that starts together is no takeover")
    }

    func testABackupWithTheNewerJournalLeadsWhenBothStart() {
        var a = pair(.primary, history: .passive, position: JournalPosition(term: 1, records: 40))
        var b = pair(.backup, history: .activeWithPeer, position: JournalPosition(term: 2, records: 10))
        exchange(&a, &b)
        XCTAssertEqual(a.state, .passive, "the primary follows the newer journal")
        XCTAssertEqual(b.state, .active)
    }

    func testAStartingCoordinatorAloneServesOnlyAfterTheTimeoutAndARequest() {
        var a = pair(.primary)
        XCTAssertNotNil(refused(a.handle(.request(witnessed: .empty), now: now)), "not settled yet")
        wait(timeout)
        XCTAssertEqual(a.handle(.tick, now: now), [], "time alone changes nothing")
        XCTAssertEqual(a.state, .startingPrimary)
        let effects = a.handle(.request(witnessed: .empty), now: now)
        XCTAssertTrue(becameActive(effects))
        XCTAssertEqual(effects.last, .accept)
        XCTAssertEqual(a.history, .activeAlone)
    }

    // MARK: - Failover

    /// Settled: `a` active with `b` in step.
    private func settled() -> (CoordinatorPair, CoordinatorPair) {
        var a = pair(.primary)
        var b = pair(.backup)
        exchange(&a, &b)
        _ = a.handle(.peerCaughtUp, now: now)
        exchange(&a, &b)
        return (a, b)
    }

    func testThePassiveTakesOverOnlyWhenTheActiveIsSilentAndAPeerTurnsToIt() {
        var (a, b) = settled()
        XCTAssertNotNil(refused(b.handle(.request(witnessed: .empty), now: now)), "the active one is alive")
        _ = a
        wait(timeout)
        XCTAssertEqual(b.handle(.tick, now: now), [], "silence alone is not enough")
        XCTAssertEqual(b.state, .passive)
        let effects = b.handle(.request(witnessed: .empty), now: now)
        XCTAssertEqual(
            effects.first,
            .becomeActive(takeover: true, reason: "the active coordinator is silent and a peer turned to this one"))
        XCTAssertEqual(effects.last, .accept)
        XCTAssertEqual(b.state, .active)
        XCTAssertEqual(b.position.term, 1, "a takeover starts a new term")
    }

    func testALinkBrokenBetweenTheTwoAloneNeverMakesTwoActive() {
        var (a, b) = settled()
        // The link breaks: neither hears the other, for much longer than the timeout; clients reach `a`.
        for _ in 0..<20 {
            wait(.seconds(1))
            XCTAssertEqual(a.handle(.request(witnessed: .empty), now: now), [.accept])
            _ = a.handle(.tick, now: now)
            XCTAssertEqual(b.handle(.tick, now: now), [])
        }
        XCTAssertEqual(a.state, .active)
        XCTAssertEqual(b.state, .passive, "nobody turned to the backup")
        XCTAssertEqual(a.history, .activeAlone, "the active one goes on alone and journals it")
        // The link mends: the pair is as before, the backup catching up again.
        exchange(&a, &b)
        XCTAssertEqual([a.state, b.state], [.active, .passive])
        XCTAssertFalse(a.announcement.peerInStep)
    }

    func testAPassiveStillCatchingUpNeverTakesOver() {
        var a = pair(.primary)
        var b = pair(.backup)
        exchange(&a, &b)  // settled, but `peerCaughtUp` never came
        wait(timeout)
        let reason = refused(b.handle(.request(witnessed: .empty), now: now))
        XCTAssertTrue(reason?.contains("catching up") == true, reason ?? "accepted")
        XCTAssertEqual(b.state, .passive)
    }

    func testAnActiveThatRestartsIsReplacedByItsInStepPeerAndThenFollowsIt() {
        var (a, b) = settled()
        a.position.records = 100
        b.position.records = 100
        // `a` restarts (kill -9): its journal says it was active with its peer in step.
        a = pair(.primary, history: .activeWithPeer, position: JournalPosition(term: 0, records: 100))
        XCTAssertTrue(becameActive(announce(a, to: &b)), "the passive one takes over from a restarted active one")
        announce(b, to: &a)
        XCTAssertEqual(a.state, .passive, "the former primary joins as the backup")
        XCTAssertEqual(b.state, .active)
    }

    func testAFormerActiveThatComesBackAloneWaitsForItsPeer() {
        // `a` was active with `b` in step; both went down; `a` comes back, `b` does not.
        var a = pair(.primary, history: .activeWithPeer, position: JournalPosition(term: 0, records: 100))
        wait(timeout * 10)
        let reason = refused(a.handle(.request(witnessed: .empty), now: now))
        XCTAssertTrue(reason?.contains("waits for its peer") == true, reason ?? "accepted")
        XCTAssertEqual(a.state, .startingPrimary, "never takes over with possibly older data")
        // `b` had taken over before it went down: it comes back, newer.
        var b = pair(.backup, history: .activeAlone, position: JournalPosition(term: 1, records: 120))
        exchange(&a, &b)
        XCTAssertEqual([a.state, b.state], [.passive, .active])
    }

    func testOneThatRanAloneMayTakeOverAloneAfterARestart() {
        var a = pair(.primary, history: .activeAlone, position: JournalPosition(term: 0, records: 300))
        wait(timeout)
        XCTAssertTrue(becameActive(a.handle(.request(witnessed: .empty), now: now)))
    }

    // MARK: - Faults an operator mends

    func testBothStartedAsPrimaryAreToldAndNeitherServes() {
        var a = pair(.primary)
        var b = pair(.primary)
        for _ in 0..<5 {
            XCTAssertNotNil(misconfigured(announce(a, to: &b)))
            XCTAssertNotNil(misconfigured(announce(b, to: &a)))
            XCTAssertNotNil(refused(a.handle(.request(witnessed: .empty), now: now)))
            XCTAssertNotNil(refused(b.handle(.request(witnessed: .empty), now: now)))
            wait(.seconds(1))
        }
        XCTAssertEqual([a.state, b.state], [.startingPrimary, .startingPrimary])
    }

    func testBothStartedAsBackupAreToldAndNeitherServes() {
        var a = pair(.backup)
        var b = pair(.backup)
        exchange(&a, &b, rounds: 3)
        XCTAssertEqual([a.state, b.state], [.startingBackup, .startingBackup])
        XCTAssertNotNil(misconfigured(announce(a, to: &b)))
    }

    func testAnActivePeerWithAnOlderJournalIsNotFollowed() {
        // `b` holds a journal of term 2; `a` was started on an old copy of the data (term 0) and took over
        // alone (term 1) before `b` was started.
        var b = pair(.backup, history: .activeWithPeer, position: JournalPosition(term: 2, records: 50))
        var a = pair(.primary, history: .activeAlone, position: JournalPosition(term: 0, records: 10))
        wait(timeout)
        _ = a.handle(.request(witnessed: .empty), now: now)
        XCTAssertEqual(a.state, .active)
        let effects = announce(a, to: &b)
        XCTAssertTrue(misconfigured(effects)?.contains("older") == true, "\(effects)")
        XCTAssertEqual(b.state, .startingBackup, "neither side changes its data")
        XCTAssertEqual(b.position, JournalPosition(term: 2, records: 50))
    }

    func testTwoActiveAfterAPartitionLeaveTheNewerJournalActive() {
        var (a, b) = settled()
        // Cut apart, with clients on both sides: `b` takes over.
        wait(timeout)
        _ = b.handle(.request(witnessed: .empty), now: now)
        a.position.records = 10
        b.position.records = 5
        XCTAssertEqual([a.state, b.state], [.active, .active])
        // Their announcements cross on the mended link.
        let fromA = a.announcement
        let fromB = b.announcement
        let onA = a.handle(.peerAnnounced(fromB), now: now)
        let onB = b.handle(.peerAnnounced(fromA), now: now)
        XCTAssertTrue(onA.contains { if case .splitBrain = $0 { true } else { false } })
        XCTAssertTrue(onB.contains { if case .splitBrain = $0 { true } else { false } })
        XCTAssertEqual(a.state, .passive, "b's takeover started term 1: its journal is the newer")
        XCTAssertEqual(b.state, .active)
    }
}
