import Wire
import XCTest

@testable import Cluster

/// The witnessed position (docs/failover.md, "The witnessed position"), without sockets: the rules'
/// (`CoordinatorPair.handle(.request(witnessed:))`) refusal of a takeover behind it, the active one's step-down,
/// the bound on a witness no coordinator could have written (ignored and counted: the request is handled as one
/// without it), and the peers' `WitnessedPosition`.
final class CoordinatorPairWitnessTests: XCTestCase {
    private let timeout = Duration.seconds(3)
    private var now = ContinuousClock.now

    private func pair(_ role: PairRole, position: JournalPosition = .empty) -> CoordinatorPair {
        CoordinatorPair(role: role, failoverTimeout: timeout, history: .none, position: position, now: now)
    }

    /// A primary `a` active and a backup `b` passive, in step, both at `position`.
    private func settled(at position: JournalPosition) -> (CoordinatorPair, CoordinatorPair) {
        var a = pair(.primary, position: position)
        var b = pair(.backup, position: position)
        for _ in 0..<2 {
            _ = b.handle(.peerAnnounced(a.announcement), now: now)
            _ = a.handle(.peerAnnounced(b.announcement), now: now)
        }
        _ = a.handle(.peerCaughtUp, now: now)
        _ = b.handle(.peerAnnounced(a.announcement), now: now)
        XCTAssertEqual([a.state, b.state], [.active, .passive])
        XCTAssertTrue(b.peer?.peerInStep == true)
        return (a, b)
    }

    private func refused(_ effects: [PairEffect]) -> String? {
        for effect in effects { if case .refuse(let reason) = effect { return reason } }
        return nil
    }

    private func ignored(_ effects: [PairEffect]) -> String? {
        for effect in effects { if case .implausibleWitness(let reason) = effect { return reason } }
        return nil
    }

    private func position(_ term: UInt64, _ records: UInt64) -> JournalPosition {
        JournalPosition(term: term, records: records)
    }

    // MARK: - The passive one

    func testAPassiveOneInStepDoesNotTakeOverBehindWhatTheClientWasAcknowledged() {
        var (_, b) = settled(at: position(0, 10))
        now += timeout  // the active one went on alone, then silent
        let effects = b.handle(.request(witnessed: position(0, 14)), now: now)
        XCTAssertEqual(b.state, .passive, "it lacks records 11…14, which the client was told")
        let reason = refused(effects) ?? ""
        XCTAssertTrue(reason.contains("behind what the peer turning to it was acknowledged"), reason)
        XCTAssertEqual(b.implausibleWitnesses, 0, "an honest witness")
        XCTAssertEqual(b.position, position(0, 10), "no new term")

        let served = b.handle(.request(witnessed: position(0, 10)), now: now)
        XCTAssertEqual(b.state, .active, "a witness it holds lets it take over")
        XCTAssertEqual(served.last, .accept)
    }

    func testAWitnessTermsAheadIsIgnoredAndCountedTheRequestHandledAsOneWithout() {
        var (_, b) = settled(at: position(2, 10))
        let effects = b.handle(.request(witnessed: position(9, 0)), now: now)
        let reason = ignored(effects) ?? ""
        XCTAssertTrue(reason.contains("more than 2 terms beyond term 2"), reason)
        XCTAssertEqual(b.implausibleWitnesses, 1)
        XCTAssertEqual(b.state, .passive)
        XCTAssertTrue(refused(effects)?.contains("the active one is alive") == true, "as without a witness: \(effects)")
        now += timeout
        let later = b.handle(.request(witnessed: position(9, 0)), now: now)
        XCTAssertEqual(b.state, .active, "with its peer silent it takes over as on a request without one")
        XCTAssertEqual(later.last, .accept)
        XCTAssertEqual(b.implausibleWitnesses, 2)
    }

    // MARK: - The active one

    func testAnActiveOneWhosePeerIsGoneStepsDownOnANewerTermOfItsPeer() {
        var (a, _) = settled(at: position(0, 10))
        now += timeout  // cut from the backup, which took over (term 1) and acknowledged on
        let effects = a.handle(.request(witnessed: position(1, 12)), now: now)
        XCTAssertEqual(a.state, .passive)
        XCTAssertTrue(effects.contains(.record(.passive)))
        XCTAssertNotNil(refused(effects))
        XCTAssertEqual(a.implausibleWitnesses, 0)
    }

    func testAnActiveOneThatHearsItsPassivePeerDoesNotStepDownOnAWitnessBeyondBothJournals() {
        var (a, _) = settled(at: position(0, 10))
        let effects = a.handle(.request(witnessed: position(0, 500)), now: now)
        XCTAssertEqual(a.state, .active, "one hostile request does not stop the cluster")
        let reason = ignored(effects) ?? ""
        XCTAssertTrue(reason.contains("beyond both journals"), reason)
        XCTAssertEqual(effects.last, .accept, "served as a request without a witness")
        XCTAssertEqual(a.implausibleWitnesses, 1)
        XCTAssertEqual(a.handle(.request(witnessed: position(0, 10)), now: now), [.accept], "still serving")
    }

    func testAnActiveOneIgnoresATermOfItsOwnParityItNeverStarted() {
        var (a, _) = settled(at: position(0, 10))
        now += timeout  // even with its peer gone
        let effects = a.handle(.request(witnessed: position(2, 1)), now: now)
        let reason = ignored(effects) ?? ""
        XCTAssertTrue(reason.contains("own (primary)"), reason)
        XCTAssertEqual(effects.last, .accept)
        XCTAssertEqual(a.state, .active)
        XCTAssertEqual(a.implausibleWitnesses, 1)
    }

    func testAnActiveOneIgnoresAWitnessTermsAheadEvenWithItsPeerGone() {
        var (_, b) = settled(at: position(0, 10))
        now += timeout
        _ = b.handle(.request(witnessed: .empty), now: now)  // takes over: term 1
        XCTAssertEqual(b.state, .active)
        XCTAssertEqual(b.position.term, 1)
        let effects = b.handle(.request(witnessed: position(UInt64.max, UInt64.max)), now: now)
        let reason = ignored(effects) ?? ""
        XCTAssertTrue(reason.contains("terms beyond"), reason)
        XCTAssertEqual(effects.last, .accept)
        XCTAssertEqual(b.state, .active)
        XCTAssertEqual(b.implausibleWitnesses, 1)
    }

    // MARK: - The peers' witnessed position

    func testAPeerKeepsTheFurthestPositionALaterTermBeatsMoreRecords() {
        var witnessed = WitnessedPosition()
        XCTAssertNil(witnessed.wire, "nothing is sent before something was witnessed")
        witnessed.witness(nil)
        XCTAssertEqual(witnessed.furthest, .empty)
        witnessed.witness(WirePairPosition(term: 0, records: 40))
        witnessed.witness(WirePairPosition(term: 0, records: 12))
        XCTAssertEqual(witnessed.furthest, position(0, 40), "an older position is ignored")
        witnessed.witness(WirePairPosition(term: 1, records: 3))
        XCTAssertEqual(witnessed.furthest, position(1, 3), "a later term beats more records")
        witnessed.witness(WirePairPosition(term: 0, records: 1_000))
        XCTAssertEqual(witnessed.wire, WirePairPosition(term: 1, records: 3))
    }

    func testTheEnvelopeCarriesTheWitnessedPositionOnlyWhenSet() throws {
        let message = Message.heartbeat(Heartbeat(workerID: "w"))
        let plain = WireCodec.encode(message)
        let stamped = WireCodec.encode(message, witnessed: WirePairPosition(term: 3, records: 7))
        XCTAssertEqual(stamped.count, plain.count + 6, "two bytes of field header, four of position")
        var found: WirePairPosition?
        XCTAssertEqual(try WireCodec.decode(stamped, witnessed: &found), message)
        XCTAssertEqual(found, WirePairPosition(term: 3, records: 7))
        found = nil
        XCTAssertEqual(try WireCodec.decode(plain, witnessed: &found), message)
        XCTAssertNil(found)
        XCTAssertEqual(try WireCodec.decode(stamped), message, "a peer that ignores it reads the same message")
    }
}
