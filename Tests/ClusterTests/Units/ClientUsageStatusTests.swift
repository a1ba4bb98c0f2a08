import Messaging
import Wire
import XCTest

@testable import Cluster

/// Status shows each client's usage, scoped as batches are: every client for an administrator (and without
/// CurveZMQ), a client key its own.
final class ClientUsageStatusTests: XCTestCase {
    func testStatusListsTheClientsTheAskerMaySeeWithTheLimits() throws {
        let key = try CurvePublicKey(z85: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7")
        let keyed = ClientIdentity(peer: PeerIdentity(Array("conn-1".utf8)), key: key)
        let anonymous = ClientIdentity(peer: PeerIdentity(Array("conn-2".utf8)), key: nil)
        var registry = BatchRegistry(
            limits: .init(
                maxBatchItems: 100, maxPendingItemsPerClient: 1_000,
                maxQueuedItemsPerClient: 50, maxBatchesPerClient: 7), keepsResults: false)
        for (id, owner, count) in [("b-1", keyed, 3), ("b-2", anonymous, 2), ("b-3", keyed, 1)] {
            let submit = SubmitBatch(
                requestID: "r", items: (0..<count).map { BatchItem(source: "http://x/\($0)") }, kind: .noop)
            _ = registry.register(
                registry.plan(batchID: id, client: PeerIdentity(Array(id.utf8)), submit: submit, owner: owner),
                answering: "r", coordinatorID: "c")
        }
        var report = StatusReport(
            dispatcher: Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5)),
            registry: registry, queuedTasks: 0, droppedMessages: 0, now: .now)
        let all = report.reply(to: StatusRequest(requestID: "s"))
        XCTAssertEqual(
            all.clients,
            [
                ClientStatus(client: "key \(key.z85)", queuedItems: 4, batches: 2),
                ClientStatus(client: "peer conn-2", queuedItems: 2, batches: 1),
            ])
        XCTAssertEqual(all.maxQueuedItemsPerClient, 50)
        XCTAssertEqual(all.maxBatchesPerClient, 7)
        report.scope = .ownedBy(key)
        XCTAssertEqual(report.reply(to: StatusRequest(requestID: "s")).clients.map(\.client), ["key \(key.z85)"])
        // A batch's own status carries no client list.
        report.scope = .all
        XCTAssertEqual(report.reply(to: StatusRequest(requestID: "s", batchID: "b-1")).clients, [])
    }
}
