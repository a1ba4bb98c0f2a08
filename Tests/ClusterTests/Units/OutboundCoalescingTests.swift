import Wire
import XCTest

@testable import Cluster

/// `Outbound.coalesced` with a wake-up's worth of messages to many peers, as a coordinator with a thousand
/// workers sends them: each peer's assignments travel as one batch message, in order, and peers come in
/// the order of their first message.
final class OutboundCoalescingTests: XCTestCase {
    private func assignment(_ peer: Int, _ index: Int) -> TaskAssignment {
        TaskAssignment(
            taskID: "p\(peer)-t\(index)", batchID: "b", attempt: 1, kind: .tiltShift,
            taskKey: UInt64(peer * 10 + index + 1))
    }

    func testEachOfManyPeersGetsOneBatchMessageWithItsAssignmentsInOrder() {
        let peers = (0..<1_000).map { PeerIdentity(Array("sim-worker-\($0)".utf8)) }
        // Round-robin over the peers, three assignments each: every peer's messages are interleaved.
        var outbound: [Outbound] = []
        for index in 0..<3 {
            for (number, peer) in peers.enumerated() {
                outbound.append(
                    Outbound(peer: peer, message: .taskAssignment(assignment(number, index)), batchable: true))
            }
        }
        let sent = Outbound.coalesced(outbound)
        XCTAssertEqual(sent.map(\.peer), peers, "one message per peer, peers in the order of their first message")
        for (number, message) in sent.enumerated() {
            guard case .taskAssignments(let grouped) = message.message else { return XCTFail("\(message.message)") }
            XCTAssertEqual(grouped.map(\.taskID), (0..<3).map { "p\(number)-t\($0)" })
        }
    }

    func testANonBatchableMessageSplitsOnlyItsOwnPeersRun() {
        let first = PeerIdentity(Array("first".utf8))
        let second = PeerIdentity(Array("second".utf8))
        let cancel = Outbound(
            peer: first, message: .cancelTask(CancelTask(taskID: "x", reason: "cancelled", taskKey: 9)))
        let sent = Outbound.coalesced([
            Outbound(peer: first, message: .taskAssignment(assignment(1, 0)), batchable: true),
            Outbound(peer: second, message: .taskAssignment(assignment(2, 0)), batchable: true),
            cancel,
            Outbound(peer: first, message: .taskAssignment(assignment(1, 1)), batchable: true),
            Outbound(peer: second, message: .taskAssignment(assignment(2, 1)), batchable: true),
        ])
        XCTAssertEqual(sent.map(\.peer), [first, first, first, second])
        XCTAssertEqual(
            sent[1].message, cancel.message, "the cancel keeps its place between the first peer's assignments")
        guard case .taskAssignments(let grouped) = sent[3].message else { return XCTFail("\(sent[3].message)") }
        XCTAssertEqual(grouped.map(\.taskID), ["p2-t0", "p2-t1"])
    }
}
