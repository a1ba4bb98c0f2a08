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
    private let endpoint = "inproc://limits-\(UUID().uuidString)"

    private func start(maxBatchItems: Int = 100, maxPendingItemsPerClient: Int = 100) async throws {
        context = try MessagingContext()
        var logger = Logger(label: "limits")
        logger.logLevel = .critical
        coordinator = try Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint], maxBatchItems: maxBatchItems, maxPendingItemsPerClient: maxPendingItemsPerClient),
            context: context, logger: logger)
        try await coordinator.start()
    }

    /// Runs `body` with a client of the coordinator, closed when `body` ends.
    private func withClient<Value>(
        socketOptions: SocketOptions = SocketOptions(), _ body: (ClusterClient) async throws -> Value
    ) async throws -> Value {
        try await ClusterClient.withConnection(
            endpoint: endpoint, context: context, responseTimeout: .seconds(5), socketOptions: socketOptions, body)
    }

    override func tearDown() async throws {
        await coordinator?.stop()
        await context?.terminate()
    }

    func testABatchLargerThanTheLimitIsRefusedWithTheLimitNamed() async throws {
        try await start(maxBatchItems: 3)
        try await withClient { client in
            guard case .failure(.refused(let reason)) = await client.firstEvent(of: .noop(items: 4)) else {
                return XCTFail("a batch of 4 items must be refused")
            }
            XCTAssertTrue(
                reason.contains("4 items") && reason.contains("--max-batch-items") && reason.contains("split"), reason)
            guard case .success = await client.firstEvent(of: .noop(items: 3)) else {
                return XCTFail("3 items are within the limit")
            }
        }
    }

    func testAClientWithTooMuchPendingWorkIsRefusedWhileOthersAreNot() async throws {
        try await start(maxPendingItemsPerClient: 4)  // no workers: nothing finishes
        try await withClient { greedy in
            guard case .success = await greedy.firstEvent(of: .noop(items: 3)) else {
                return XCTFail("3 pending items are allowed")
            }
            guard case .failure(.refused(let reason)) = await greedy.firstEvent(of: .noop(items: 2)) else {
                return XCTFail("3 + 2 pending items exceed the limit of 4")
            }
            XCTAssertTrue(
                reason.contains("3 unfinished items") && reason.contains("--max-pending-items-per-client"), reason)
            guard case .success = await greedy.firstEvent(of: .noop(items: 1)) else {
                return XCTFail("3 + 1 is within the limit")
            }
            try await withClient { other in
                guard case .success = await other.firstEvent(of: .noop(items: 4)) else {
                    return XCTFail("the limit is per client")
                }
            }
        }
    }

    func testAnEmptyBatchIsRefused() async throws {
        try await start()
        guard case .failure(.refused(let reason)) = try await withClient({ await $0.firstEvent(of: .noop(items: 0)) })
        else {
            return XCTFail("an empty batch must be refused")
        }
        XCTAssertTrue(reason.contains("no items"), reason)
    }

    func testEmptyAndHostileSourcesAreRefusedNamingTheItem() async throws {
        try await start()
        let cases: [(String, String)] = [
            ("", "item 1: the source is empty"),
            ("   ", "item 1: the source is empty"),
            (
                "http://x/a.jpg\n2026-11-23 forged",
                "item 1: the source 'http://x/a.jpg\\n2026-11-23 forged' contains control characters"
            ),
            ("http://x/" + String(repeating: "a", count: 9000), "more than 8192"),
        ]
        for (source, expected) in cases {
            let submit = SubmitBatch(
                requestID: "", items: [BatchItem(source: "fine"), BatchItem(source: source)], kind: .noop)
            guard case .failure(.refused(let reason)) = try await withClient({ await $0.firstEvent(of: submit) }) else {
                XCTFail("the source '\(source.prefix(40))' must be refused")
                continue
            }
            XCTAssertTrue(reason.contains(expected), reason)
        }
    }

    func testAWorkerWhoseIDBreaksTheRulesIsRefusedAndSaysWhy() async throws {
        try await start()
        var logger = Logger(label: "worker")
        logger.logLevel = .critical
        let worker = Worker(
            configuration: WorkerConfiguration(coordinator: endpoint, slots: 1, workerID: "evil\u{1B}[2J\nforged"),
            context: context, logger: logger)
        do {
            try await worker.run()
            XCTFail("the coordinator must refuse the worker")
        } catch let error as WorkerError {
            XCTAssertTrue(error.description.contains("has characters other than"), error.description)
            XCTAssertTrue(error.description.contains("--worker-id"), error.description)
            XCTAssertFalse(error.description.contains("\u{1B}"), "the refusal quotes the ID escaped")
        }
    }

    func testABatchTooLargeForOneMessageIsRefusedBeforeItIsSent() async throws {
        try await start()
        var options = SocketOptions()
        options.maxMessageSize = 1 << 20
        let huge = SubmitBatch(
            requestID: "",
            items: (0..<20_000).map {
                BatchItem(source: "https://example.com/\($0)/" + String(repeating: "x", count: 60))
            })
        guard
            case .failure(.messageTooLarge(let bytes, let limit)) = try await withClient(
                socketOptions: options, { await $0.firstEvent(of: huge) })
        else {
            return XCTFail("a 2 MB submission over a 1 MiB limit must be refused")
        }
        XCTAssertGreaterThan(bytes, Int(limit))
        XCTAssertTrue(ClusterClientError.messageTooLarge(bytes: bytes, limit: limit).description.contains("split it"))
    }
}

/// The message-size limit over real processes: a worker whose result would exceed what the coordinator
/// accepts fails that task with a clear error instead of being disconnected, and the rest goes on.
final class MessageSizeLimitTests: ClusterTestCase {
    func testAnOutputTooLargeForTheCoordinatorFailsItsItemOnly() async throws {
        let endpoint = try await harness.startCoordinator(["--max-message-mb", "1"])
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let small = try server.serveSyntheticImages(1, prefix: "small")
        // Noise does not compress: a 2000×1600 PNG of it is well over 1 MiB, and so is its tilt-shift (whose
        // sharp middle keeps the noise). The download stays on the worker; the output must cross.
        let big = try SyntheticImages.make(width: 2000, height: 1600, format: .png, seed: 9)
        XCTAssertGreaterThan(big.count, 1 << 20)
        server.serve(path: "/big.png", body: big, contentType: "image/png")
        let out = harness.scratch.appendingPathComponent("sized")
        let (status, output) = try await harness.run(
            ["submit", small[0], server.url("/big.png"), "--out", out.path, "--json", "--coordinator", endpoint])
        XCTAssertEqual(status, 1, output)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        XCTAssertEqual(report.int("succeeded"), 1, output)
        let error = try XCTUnwrap(report.objects("items").compactMap { $0["error"] as? String }.first, output)
        XCTAssertTrue(error.contains("more than the largest message the coordinator accepts (1 MiB"), error)
        // The worker is still connected and serving.
        let cluster = try await harness.status(endpoint)
        XCTAssertEqual(cluster.objects("workers").count, 1, harness.allOutput)
    }
}
