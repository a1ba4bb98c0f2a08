import Cluster
import Foundation
import Logging
import Messaging
import Wire
import XCTest

/// A coordinator's limits refuse what is too much, each with a message that says which limit and
/// what to do: a real coordinator and real clients over `inproc://`.
final class LimitsTests: XCTestCase {
    private var context: MessagingContext!
    private var coordinator: Coordinator!
    private var clients: [ClusterClient] = []
    private let endpoint = "inproc://limits-\(UUID().uuidString)"

    private func start(maxBatchItems: Int = 100, maxPendingItemsPerClient: Int = 100) async throws {
        context = try MessagingContext()
        var logger = Logger(label: "limits")
        logger.logLevel = .critical
        coordinator = Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint], maxBatchItems: maxBatchItems, maxPendingItemsPerClient: maxPendingItemsPerClient),
            context: context, logger: logger)
        try await coordinator.start()
    }

    private func client() async throws -> ClusterClient {
        let client = try await ClusterClient(endpoint: endpoint, context: context, responseTimeout: .seconds(5))
        clients.append(client)
        return client
    }

    override func tearDown() async throws {
        for client in clients { await client.close() }
        await coordinator?.stop()
        await context?.terminate()
    }

    private func noop(_ count: Int) -> SubmitBatch {
        SubmitBatch(requestID: "", items: (0..<count).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
    }

    /// The first event of a submission: the batch's ID, or the refusal's text.
    private func firstEvent(_ client: ClusterClient, _ batch: SubmitBatch) async -> Result<String, ClusterClientError> {
        do {
            for try await event in await client.submit(batch) {
                if case .accepted(let batchID, _) = event { return .success(batchID) }
            }
            return .failure(.closed)
        } catch let error as ClusterClientError {
            return .failure(error)
        } catch {
            return .failure(.refused("\(error)"))
        }
    }

    func testABatchLargerThanTheLimitIsRefusedWithTheLimitNamed() async throws {
        try await start(maxBatchItems: 3)
        let client = try await client()
        guard case .failure(.refused(let reason)) = await firstEvent(client, noop(4)) else {
            return XCTFail("a batch of 4 items must be refused")
        }
        XCTAssertTrue(reason.contains("4 items") && reason.contains("--max-batch-items") && reason.contains("split"), reason)
        guard case .success = await firstEvent(client, noop(3)) else { return XCTFail("3 items are within the limit") }
    }

    func testAClientWithTooMuchPendingWorkIsRefusedWhileOthersAreNot() async throws {
        try await start(maxPendingItemsPerClient: 4)  // no workers: nothing finishes
        let greedy = try await client()
        guard case .success = await firstEvent(greedy, noop(3)) else { return XCTFail("3 pending items are allowed") }
        guard case .failure(.refused(let reason)) = await firstEvent(greedy, noop(2)) else {
            return XCTFail("3 + 2 pending items exceed the limit of 4")
        }
        XCTAssertTrue(reason.contains("3 unfinished items") && reason.contains("--max-pending-items-per-client"), reason)
        guard case .success = await firstEvent(greedy, noop(1)) else { return XCTFail("3 + 1 is within the limit") }
        let other = try await client()
        guard case .success = await firstEvent(other, noop(4)) else { return XCTFail("the limit is per client") }
    }

    func testAnEmptyBatchIsRefused() async throws {
        try await start()
        guard case .failure(.refused(let reason)) = await firstEvent(try await client(), noop(0)) else {
            return XCTFail("an empty batch must be refused")
        }
        XCTAssertTrue(reason.contains("no items"), reason)
    }

    func testABatchTooLargeForOneMessageIsRefusedBeforeItIsSent() async throws {
        try await start()
        var options = SocketOptions()
        options.maxMessageSize = 1 << 20
        let client = try await ClusterClient(endpoint: endpoint, context: context, responseTimeout: .seconds(5), socketOptions: options)
        clients.append(client)
        let huge = SubmitBatch(requestID: "", items: (0..<20_000).map { BatchItem(source: "https://example.com/\($0)/" + String(repeating: "x", count: 60)) })
        guard case .failure(.messageTooLarge(let bytes, let limit)) = await firstEvent(client, huge) else {
            return XCTFail("a 2 MB submission over a 1 MiB limit must be refused")
        }
        XCTAssertGreaterThan(bytes, Int(limit))
        XCTAssertTrue(ClusterClientError.messageTooLarge(bytes: bytes, limit: limit).description.contains("split it"))
    }
}
