import Foundation
import Messaging
import XCTest

@testable import Cluster

/// `WorkerBinding` decided without sockets: each rule with and without keys, and what it lets through.
/// (`WorkerBindingTests` runs them through real sockets.)
final class WorkerBindingUnitTests: XCTestCase {
    private var honestKey: CurvePublicKey!
    private var liarKey: CurvePublicKey!
    private let honestPeer = PeerIdentity(Array("w1".utf8))
    private let otherPeer = PeerIdentity(Array("w2".utf8))

    override func setUpWithError() throws {
        honestKey = try CurveKeyPair.generate().publicKey
        liarKey = try CurveKeyPair.generate().publicKey
    }

    private func registration(_ peer: PeerIdentity, _ key: CurvePublicKey?) -> WorkerBinding.Registration {
        WorkerBinding.Registration(peer: peer, workerID: peer.description, key: key)
    }

    func testARegistrationSpeaksOnlyWithTheKeyThatMadeIt() {
        let registered = registration(honestPeer, honestKey)
        let own = MessageSender(identity: honestPeer, key: honestKey)
        let takenOver = MessageSender(identity: honestPeer, key: liarKey)
        for claim: WorkerBinding.Claim in [
            .registered, .hello(workerID: "w1", holder: nil),
            .result(taskID: "t", runningOn: honestPeer),
        ] {
            XCTAssertNil(WorkerBinding.decide(claim, from: own, registered: registered), "\(claim)")
            let refusal = WorkerBinding.decide(claim, from: takenOver, registered: registered)
            XCTAssertEqual(refusal?.reason, .workerKeyMismatch, "\(claim)")
            XCTAssertTrue(refusal?.message.contains(liarKey.z85) == true, refusal?.message ?? "")
        }
        // A connection without a key cannot speak for a registration made with one, nor the other way round.
        let keyless = MessageSender(identity: honestPeer, key: nil)
        XCTAssertEqual(
            WorkerBinding.decide(.registered, from: keyless, registered: registered)?.reason, .workerKeyMismatch)
        XCTAssertEqual(
            WorkerBinding.decide(.registered, from: own, registered: registration(honestPeer, nil))?.reason,
            .workerKeyMismatch)
    }

    func testAWorkerIDBelongsToOneConnectionWithOrWithoutKeys() {
        for key in [liarKey, honestKey, nil] as [CurvePublicKey?] {
            let sender = MessageSender(identity: otherPeer, key: key)
            let refusal = WorkerBinding.decide(
                .hello(workerID: "w1", holder: registration(honestPeer, honestKey)),
                from: sender, registered: nil)
            XCTAssertEqual(refusal?.reason, .workerIDTaken)
            XCTAssertTrue(refusal?.message.contains("another --worker-id") == true, refusal?.message ?? "")
        }
        // A free ID, or the sender's own (a worker that says hello again), is accepted.
        XCTAssertNil(
            WorkerBinding.decide(
                .hello(workerID: "w3", holder: nil), from: MessageSender(identity: otherPeer, key: nil),
                registered: nil))
        XCTAssertNil(
            WorkerBinding.decide(
                .hello(workerID: "w1", holder: registration(honestPeer, nil)),
                from: MessageSender(identity: honestPeer, key: nil), registered: registration(honestPeer, nil)))
    }

    func testAResultAnswersOnlyForTheSendersOwnTask() {
        let other = MessageSender(identity: otherPeer, key: honestKey)
        XCTAssertEqual(
            WorkerBinding.decide(.result(taskID: "t", runningOn: honestPeer), from: other, registered: nil)?.reason,
            .notAssigned)
        XCTAssertEqual(
            WorkerBinding.decide(
                .result(taskID: "t", runningOn: honestPeer), from: other,
                registered: registration(otherPeer, honestKey))?.reason, .notAssigned)
        // Stale or unknown (no current holder): left to the dispatcher, which drops and counts it.
        XCTAssertNil(WorkerBinding.decide(.result(taskID: "t", runningOn: nil), from: other, registered: nil))
        XCTAssertNil(WorkerBinding.decide(.result(taskID: "t", runningOn: otherPeer), from: other, registered: nil))
    }
}
