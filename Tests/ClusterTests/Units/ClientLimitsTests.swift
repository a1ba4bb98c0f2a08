import Messaging
import Wire
import XCTest

@testable import Cluster

/// Per-client limits (`--max-queued-items-per-client`, `--max-batches-per-client`) on the registry's state,
/// no sockets: a client is its key (every connection with it together), else its connection; over a limit a
/// submission or retry is refused with `.limit` and a reason naming the limit and what is in use, and what
/// was accepted before is untouched.
final class ClientLimitsTests: XCTestCase {
    private let alice = ClientIdentity(peer: PeerIdentity(Array("alice".utf8)), key: nil)
    private let bob = ClientIdentity(peer: PeerIdentity(Array("bob".utf8)), key: nil)

    private func makeRegistry(queuedItems: Int, batches: Int, keepFinished: Int = 100) -> BatchRegistry {
        BatchRegistry(
            limits: .init(
                maxBatchItems: 1_000, maxPendingItemsPerClient: 1_000_000,
                maxQueuedItemsPerClient: queuedItems, maxBatchesPerClient: batches),
            keepsResults: false, retention: BatchRetention(maxFinishedBatches: keepFinished))
    }

    private func submit(_ count: Int, requestID: String = "r") -> SubmitBatch {
        SubmitBatch(
            requestID: requestID, items: (0..<count).map { BatchItem(source: "http://x/\($0).jpg") }, kind: .noop)
    }

    /// Submits as `owner` from `connection` (by default the owner's own); returns the refusal, if any.
    @discardableResult
    private func offer(
        _ registry: inout BatchRegistry, _ id: String, _ count: Int, as owner: ClientIdentity,
        from connection: PeerIdentity? = nil
    ) -> Refusal? {
        let peer = connection ?? PeerIdentity(Array(owner.description.utf8))
        let submit = submit(count)
        if let refusal = registry.refusal(of: submit, from: peer, owner: owner) { return refusal }
        _ = registry.register(
            registry.plan(batchID: id, client: peer, submit: submit, owner: owner),
            answering: submit.requestID, coordinatorID: "c")
        return nil
    }

    private func finishAll(_ registry: inout BatchRegistry, _ id: String) {
        let count = registry.batches[id]?.items.count ?? 0
        for index in 0..<count { _ = registry.finish(item: index, of: id, outcome: .output(TaskOutput(data: []))) }
    }

    func testQueuedItemsAreBoundedPerClientAndFreedAsItemsFinish() throws {
        var registry = makeRegistry(queuedItems: 10, batches: 100)
        XCTAssertNil(offer(&registry, "b-1", 6, as: alice))
        let refusal = try XCTUnwrap(offer(&registry, "b-2", 5, as: alice))
        XCTAssertEqual(refusal.code, .limit)
        XCTAssertEqual(refusal.requestID, "r")
        XCTAssertTrue(refusal.reason.contains("already has 6 unfinished items"), refusal.reason)
        XCTAssertTrue(refusal.reason.contains("would add 5"), refusal.reason)
        XCTAssertTrue(refusal.reason.contains("(10, its --max-queued-items-per-client)"), refusal.reason)
        // Another client is not held back by alice's queue; alice's accepted batch is untouched.
        XCTAssertNil(offer(&registry, "b-3", 10, as: bob))
        XCTAssertEqual(registry.batches["b-1"]?.unfinishedCount, 6)
        XCTAssertEqual(registry.clientUsage[alice], ClientUsage(queuedItems: 6, batches: 1))
        XCTAssertEqual(registry.clientUsage[bob], ClientUsage(queuedItems: 10, batches: 1))
        // As alice's items finish, her queue has room again.
        finishAll(&registry, "b-1")
        XCTAssertEqual(registry.clientUsage[alice], ClientUsage(queuedItems: 0, batches: 1))
        XCTAssertNil(offer(&registry, "b-2", 5, as: alice))
    }

    func testBatchesKeptAreBoundedPerClientAndFreedAsTheyAreRetired() throws {
        var registry = makeRegistry(queuedItems: 1_000, batches: 2, keepFinished: 1)
        XCTAssertNil(offer(&registry, "b-1", 1, as: alice))
        XCTAssertNil(offer(&registry, "b-2", 1, as: alice))
        let refusal = try XCTUnwrap(offer(&registry, "b-3", 1, as: alice))
        XCTAssertEqual(refusal.code, .limit)
        XCTAssertTrue(refusal.reason.contains("already has 2 batches"), refusal.reason)
        XCTAssertTrue(refusal.reason.contains("(2, its --max-batches-per-client)"), refusal.reason)
        XCTAssertNil(offer(&registry, "b-4", 1, as: bob))
        // A finished batch still counts while it is kept; retired (one finished batch kept), it no longer does.
        finishAll(&registry, "b-1")
        XCTAssertEqual(registry.clientUsage[alice]?.batches, 2)
        XCTAssertNotNil(offer(&registry, "b-3", 1, as: alice))
        finishAll(&registry, "b-2")  // keeps b-2, retires b-1
        XCTAssertEqual(registry.clientUsage[alice], ClientUsage(queuedItems: 0, batches: 1))
        XCTAssertNil(offer(&registry, "b-3", 1, as: alice))
    }

    func testAClientIsItsKeyAcrossConnections() throws {
        let key = try CurvePublicKey(z85: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7")
        let keyed = ClientIdentity(peer: PeerIdentity(Array("conn-1".utf8)), key: key)
        let sameKey = ClientIdentity(peer: PeerIdentity(Array("conn-2".utf8)), key: key)
        XCTAssertEqual(keyed, sameKey)
        var registry = makeRegistry(queuedItems: 5, batches: 100)
        XCTAssertNil(offer(&registry, "b-1", 3, as: keyed, from: PeerIdentity(Array("conn-1".utf8))))
        let refusal = try XCTUnwrap(offer(&registry, "b-2", 3, as: sameKey, from: PeerIdentity(Array("conn-2".utf8))))
        XCTAssertTrue(refusal.reason.contains("already has 3 unfinished items"), refusal.reason)
    }

    func testAManifestsItemsAndARetryCountAgainstTheClient() throws {
        var registry = makeRegistry(queuedItems: 4, batches: 100)
        XCTAssertNil(offer(&registry, "b-1", 2, as: alice))
        _ = try registry.expand(item: 0, of: "b-1", entries: ["http://x/a.jpg", "http://x/b.jpg"])
        XCTAssertEqual(registry.clientUsage[alice]?.queuedItems, 4)
        XCTAssertNotNil(offer(&registry, "b-2", 1, as: alice))
        for index in 0..<4 {
            _ = registry.finish(item: index, of: "b-1", outcome: .failure(TaskFailure(code: .download)))
        }
        XCTAssertEqual(registry.clientUsage[alice]?.queuedItems, 0)
        XCTAssertNil(offer(&registry, "b-2", 1, as: alice))
        // Re-running b-1's four failed items would make five queued: refused, naming the limit.
        guard
            case .refused(let refusal) = registry.retrySelection(RetryBatch(requestID: "t", batchID: "b-1", items: []))
        else {
            return XCTFail("a retry over the client's limit was accepted")
        }
        XCTAssertEqual(refusal.code, .limit)
        XCTAssertTrue(refusal.reason.contains("--max-queued-items-per-client"), refusal.reason)
    }
}
