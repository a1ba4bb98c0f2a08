import XCTest

@testable import Cluster

/// `AcknowledgementGate`: what the active coordinator of a pair acknowledges waits for its peer.
final class AcknowledgementGateTests: XCTestCase {
    private let now = ContinuousClock.now
    private let client = PeerIdentity([1])
    private let worker = PeerIdentity([2])

    private func position(_ records: UInt64) -> JournalPosition { JournalPosition(term: 0, records: records) }

    private func submit(
        _ gate: inout AcknowledgementGate<(PeerIdentity, String)>, _ text: String, to peer: PeerIdentity,
        following: JournalPosition?
    ) -> [String] {
        gate.submit([(peer, text)], to: \.0, following: following, now: now).map(\.1)
    }

    func testWithoutAPeerInStepEverythingGoesAtOnce() {
        var gate = AcknowledgementGate<(PeerIdentity, String)>()
        XCTAssertEqual(submit(&gate, "accepted", to: client, following: position(5)), ["accepted"])
    }

    func testAnAcknowledgementWaitsUntilThePeerHoldsItsRecord() {
        var gate = AcknowledgementGate<(PeerIdentity, String)>()
        gate.hold(peerHolds: position(4))
        XCTAssertEqual(submit(&gate, "accepted b-1", to: client, following: position(5)), [])
        XCTAssertEqual(submit(&gate, "finished 0", to: client, following: position(6)), [])
        XCTAssertEqual(submit(&gate, "assignment", to: worker, following: nil), ["assignment"], "follows no record")
        XCTAssertEqual(submit(&gate, "status", to: client, following: nil), [], "behind the client's waiting ones")
        XCTAssertEqual(gate.waitingCount, 3)
        XCTAssertEqual(gate.oldestWaitingSince, now)
        XCTAssertEqual(gate.peerHolds(position(5)).map(\.1), ["accepted b-1"])
        XCTAssertEqual(gate.peerHolds(position(6)).map(\.1), ["finished 0", "status"])
        XCTAssertEqual(gate.waitingCount, 0)
        XCTAssertNil(gate.oldestWaitingSince)
        XCTAssertEqual(submit(&gate, "finished 1", to: client, following: position(6)), ["finished 1"], "held already")
    }

    func testAPeerGoneReleasesEverythingInOrder() {
        var gate = AcknowledgementGate<(PeerIdentity, String)>()
        gate.hold(peerHolds: position(0))
        _ = submit(&gate, "one", to: client, following: position(1))
        _ = submit(&gate, "two", to: worker, following: position(2))
        XCTAssertEqual(gate.release().map(\.1), ["one", "two"])
        XCTAssertEqual(submit(&gate, "three", to: client, following: position(3)), ["three"])
    }
}
