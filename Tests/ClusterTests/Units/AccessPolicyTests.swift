import Foundation
import Messaging
import XCTest

@testable import Cluster

/// Roles for keys, decided without sockets: every rule of `AccessPolicy`, the union of roles of a key on
/// several lists, and how `AccessControl` counts refusals and follows owners and reloads.
final class AccessPolicyTests: XCTestCase {
    private var alice: CurvePublicKey!
    private var bob: CurvePublicKey!

    override func setUpWithError() throws {
        alice = try CurveKeyPair.generate().publicKey
        bob = try CurveKeyPair.generate().publicKey
    }

    private func peer(_ key: CurvePublicKey, _ roles: Set<PeerRole>) -> PeerAccess {
        PeerAccess(key: key, roles: roles)
    }

    private func refusal(
        _ decision: AccessDecision, file: StaticString = #filePath, line: UInt = #line
    ) -> AccessRefusal? {
        guard case .refused(let refusal) = decision else {
            XCTFail("allowed: \(decision)", file: file, line: line)
            return nil
        }
        return refusal
    }

    func testWorkerMessagesNeedTheWorkerRole() throws {
        XCTAssertEqual(AccessPolicy.decide(.workerMessage, by: peer(alice, [.worker])), .allowed(.all))
        for roles: Set<PeerRole> in [[.client], [.admin], [.client, .admin], []] {
            let refused = try XCTUnwrap(refusal(AccessPolicy.decide(.workerMessage, by: peer(alice, roles))))
            XCTAssertEqual(refused.labels.reason, .needsWorker)
            XCTAssertEqual(refused.labels.request, "worker")
            XCTAssertEqual(refused.labels.role, PeerRole.label(roles))
            XCTAssertTrue(refused.message.contains("needs the worker role"), refused.message)
            XCTAssertTrue(refused.message.contains("--allow-workers"), refused.message)
        }
    }

    func testSubmittingNeedsTheClientRoleAndAnAdministratorIsNotAClient() throws {
        XCTAssertEqual(AccessPolicy.decide(.submit, by: peer(alice, [.client])), .allowed(.all))
        for roles: Set<PeerRole> in [[.worker], [.admin], [.worker, .admin]] {
            let refused = try XCTUnwrap(refusal(AccessPolicy.decide(.submit, by: peer(alice, roles))))
            XCTAssertEqual(refused.labels.reason, .needsClient)
            XCTAssertTrue(refused.message.contains("submitting a batch needs the client role"), refused.message)
        }
        let worker = try XCTUnwrap(refusal(AccessPolicy.decide(.submit, by: peer(alice, [.worker]))))
        XCTAssertTrue(worker.message.hasSuffix("this key has the worker role only"), worker.message)
    }

    func testAClientListsOnlyItsOwnBatchesAnAdministratorAllAndAWorkerNone() throws {
        XCTAssertEqual(AccessPolicy.decide(.listBatches, by: peer(alice, [.client])), .allowed(.ownedBy(alice)))
        XCTAssertEqual(AccessPolicy.decide(.listBatches, by: peer(alice, [.admin])), .allowed(.all))
        XCTAssertEqual(AccessPolicy.decide(.listBatches, by: peer(alice, [.client, .admin])), .allowed(.all))
        let worker = try XCTUnwrap(refusal(AccessPolicy.decide(.listBatches, by: peer(alice, [.worker]))))
        XCTAssertEqual(worker.labels.reason, .needsClientOrAdmin)
        XCTAssertEqual(worker.labels.request, "status")

        XCTAssertTrue(BatchScope.ownedBy(alice).includes(alice))
        XCTAssertFalse(BatchScope.ownedBy(alice).includes(bob))
        XCTAssertFalse(BatchScope.ownedBy(alice).includes(nil))
        XCTAssertTrue(BatchScope.all.includes(nil))
    }

    func testAClientReadsCancelsAndFetchesOnlyItsOwnBatch() throws {
        for action in [AccessRequest.BatchAction.status, .cancel, .results, .retry] {
            XCTAssertEqual(
                AccessPolicy.decide(.batch(action, batchID: "b-1", owner: .key(alice)), by: peer(alice, [.client])),
                .allowed(.all))
            let other = try XCTUnwrap(
                refusal(
                    AccessPolicy.decide(
                        .batch(action, batchID: "b-1", owner: .key(alice)), by: peer(bob, [.client]))))
            XCTAssertEqual(
                other.labels, AccessRefusal.Labels(role: "client", request: action.rawValue, reason: .notOwner))
            XCTAssertTrue(other.message.contains("batch b-1 was submitted by another client"), other.message)
            XCTAssertTrue(other.message.contains("needs the admin role"), other.message)
            let unowned = try XCTUnwrap(
                refusal(
                    AccessPolicy.decide(
                        .batch(action, batchID: "b-2", owner: .nobody), by: peer(bob, [.client]))))
            XCTAssertEqual(unowned.labels.reason, .notOwner)
            XCTAssertTrue(unowned.message.contains("has no owner"), unowned.message)
            // A batch the coordinator does not know is answered as such, not as forbidden.
            XCTAssertEqual(
                AccessPolicy.decide(.batch(action, batchID: "b-9", owner: .unknownBatch), by: peer(bob, [.client])),
                .allowed(.all))
        }
    }

    func testAnAdministratorReadsCancelsAndFetchesEveryBatchAndAWorkerNone() throws {
        for action in [AccessRequest.BatchAction.status, .cancel, .results, .retry] {
            for owner in [BatchOwner.key(alice), .nobody, .unknownBatch] {
                XCTAssertEqual(
                    AccessPolicy.decide(.batch(action, batchID: "b", owner: owner), by: peer(bob, [.admin])),
                    .allowed(.all))
                let worker = try XCTUnwrap(
                    refusal(AccessPolicy.decide(.batch(action, batchID: "b", owner: owner), by: peer(alice, [.worker])))
                )
                XCTAssertEqual(worker.labels.reason, .needsClientOrAdmin)
                XCTAssertTrue(
                    worker.message.contains("needs the client role (for its own batches) or the admin role"),
                    worker.message)
            }
        }
    }

    func testAKeyOnTwoListsHasTheUnionOfTheirRights() {
        var roles = AccessRoles()
        roles.grant([.worker], to: alice)
        roles.grant([.client], to: alice)
        roles.grant([], to: bob)
        XCTAssertEqual(roles.roles(of: alice), [.worker, .client])
        XCTAssertEqual(roles.roles(of: bob), [], "an empty grant does not admit a key")
        XCTAssertEqual(roles.allKeys, [alice])
        let both = PeerAccess(key: alice, roles: roles.roles(of: alice))
        XCTAssertEqual(AccessPolicy.decide(.workerMessage, by: both), .allowed(.all))
        XCTAssertEqual(AccessPolicy.decide(.submit, by: both), .allowed(.all))
        XCTAssertEqual(AccessPolicy.decide(.listBatches, by: both), .allowed(.ownedBy(alice)))
        XCTAssertEqual(roles.summary, "workers 1, clients 1, admins 0")
        XCTAssertEqual(AccessRoles(allRoles: [alice]).roles(of: alice), Set(PeerRole.allCases))
    }

    func testWithoutCurveZMQEveryPeerHasEveryRightAndNoBatchHasAnOwner() {
        var control = AccessControl(roles: nil)
        XCTAssertEqual(control.peer(nil), .unrestricted)
        XCTAssertEqual(control.decide(.workerMessage, from: nil), .allowed(.all))
        XCTAssertEqual(control.decide(.submit, from: nil), .allowed(.all))
        XCTAssertEqual(control.decide(.listBatches, from: nil), .allowed(.all))
        control.recordOwner(nil, of: "b-1")
        XCTAssertEqual(control.owner(of: "b-1", isKnown: true), .nobody)
        XCTAssertEqual(control.decide(.batch(.cancel, batchID: "b-1", owner: .nobody), from: nil), .allowed(.all))
        control.replaceRoles(AccessRoles(allRoles: [alice]))
        XCTAssertNil(control.roles, "a coordinator without CurveZMQ has no lists to reload")
        XCTAssertTrue(control.refusals.isEmpty)
    }

    func testAccessControlCountsRefusalsFollowsOwnersAndReloads() {
        var roles = AccessRoles()
        roles.grant([.client], to: alice)
        roles.grant([.worker], to: bob)
        var control = AccessControl(roles: roles)
        XCTAssertEqual(control.decide(.submit, from: alice), .allowed(.all))
        control.recordOwner(alice, of: "b-1")
        XCTAssertEqual(control.owner(of: "b-1", isKnown: true), .key(alice))
        XCTAssertEqual(control.owner(of: "b-1", isKnown: false), .unknownBatch)
        _ = control.decide(.submit, from: bob)
        _ = control.decide(.submit, from: bob)
        _ = control.decide(.workerMessage, from: nil)  // CurveZMQ on, but no key: no role
        XCTAssertEqual(
            control.refusals,
            [
                AccessRefusal.Labels(role: "worker", request: "submit", reason: .needsClient): 2,
                AccessRefusal.Labels(role: "none", request: "worker", reason: .needsWorker): 1,
            ])
        // A reload that drops alice: her next message is refused, as a key with no role.
        var reloaded = AccessRoles()
        reloaded.grant([.worker], to: bob)
        control.replaceRoles(reloaded)
        guard case .refused(let refused) = control.decide(.listBatches, from: alice) else {
            return XCTFail("alice still admitted")
        }
        XCTAssertEqual(refused.labels.role, "none")
        XCTAssertTrue(refused.message.contains("on none of the coordinator's allow-lists"), refused.message)
        control.forget("b-1")
        XCTAssertEqual(control.owner(of: "b-1", isKnown: true), .nobody)
    }

    /// Lists are read from disk with their options' roles; empty role lists are allowed, all empty is not.
    func testAllowListsLoadWithTheirRolesAndSayWhichListIsWrong() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roles-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let workers = directory.appendingPathComponent("workers")
        let admins = directory.appendingPathComponent("admins")
        for folder in [workers, admins] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try "\(alice.z85)\n".write(to: workers.appendingPathComponent("alice.pub"), atomically: true, encoding: .utf8)
        let clients = directory.appendingPathComponent("clients.txt")
        try "# clients\n\(alice.z85) alice\n\(bob.z85) bob\n".write(to: clients, atomically: true, encoding: .utf8)
        let sources = [
            AllowListSource(path: workers.path, roles: [.worker], option: "--allow-workers"),
            AllowListSource(path: clients.path, roles: [.client], option: "--allow-clients"),
            AllowListSource(path: admins.path, roles: [.admin], option: "--allow-admins"),
        ]
        let roles = try AccessRoles.load(sources)
        XCTAssertEqual(roles.roles(of: alice), [.worker, .client])
        XCTAssertEqual(roles.roles(of: bob), [.client])
        XCTAssertEqual(roles.count(of: .admin), 0)

        XCTAssertThrowsError(try AccessRoles.load([sources[2]])) { error in
            XCTAssertTrue(
                "\(error)".contains("the allow-lists hold no public key (--allow-admins \(admins.path))"), "\(error)")
        }
        try "not a key\n".write(to: admins.appendingPathComponent("broken.pub"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try AccessRoles.load(sources)) { error in
            XCTAssertTrue("\(error)".hasPrefix("--allow-admins: "), "\(error)")
            XCTAssertTrue("\(error)".contains("broken.pub line 1"), "\(error)")
        }
    }
}
