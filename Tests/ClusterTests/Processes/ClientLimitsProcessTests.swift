import Cluster
import Foundation
import ShiftworkTestSupport
import Wire
import XCTest

/// Per-client limits on a real coordinator process, with two clients: one that reaches its limits is
/// refused with the limit and what it has in use, while the other is served and nothing accepted changes;
/// the metrics show each client's usage.
final class ClientLimitsProcessTests: ClusterTestCase {
    func testAClientOverItsLimitsIsRefusedWhileAnotherIsServed() async throws {
        let coordinator = try harness.launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure", "--metrics-listen", "127.0.0.1:0",
            ], environment: ["SHIFTWORK_MAX_QUEUED_ITEMS_PER_CLIENT": "5", "SHIFTWORK_MAX_BATCHES_PER_CLIENT": "2"])
        let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
        let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
        let endpoint = try XCTUnwrap(
            endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
        let metricsURL = try XCTUnwrap(metricsLine?.components(separatedBy: "metrics on ").last, coordinator.outputText)
        try await harness.withClient(endpoint) { greedy in
            try await harness.withClient(endpoint) { modest in

                // No worker yet: everything accepted stays queued.
                guard case .success(let first) = await greedy.firstEvent(of: .noop(items: 4)) else {
                    return XCTFail(coordinator.outputText)
                }
                guard case .failure(.refused(let items)) = await greedy.firstEvent(of: .noop(items: 2)) else {
                    return XCTFail("a submission over the client's queued items was accepted")
                }
                XCTAssertTrue(items.contains("already has 4 unfinished items and this would add 2"), items)
                XCTAssertTrue(items.contains("(5, its --max-queued-items-per-client)"), items)
                guard case .success = await greedy.firstEvent(of: .noop(items: 1)) else {
                    return XCTFail(coordinator.outputText)
                }
                guard case .failure(.refused(let batches)) = await greedy.firstEvent(of: .noop(items: 0 + 1)) else {
                    return XCTFail("a submission over the client's batches was accepted")
                }
                XCTAssertTrue(
                    batches.contains("already has 2 batches") && batches.contains("(2, its --max-batches-per-client)"),
                    batches)
                // The other client is served as if the first were not there.
                guard case .success = await modest.firstEvent(of: .noop(items: 5)) else {
                    return XCTFail("the second client was refused")
                }

                let page = try await TestHTTPClient.get(metricsURL).text
                func values(_ metric: String) -> [Double] {
                    page.split(separator: "\n").filter { $0.hasPrefix(metric + "{") }.compactMap {
                        $0.split(separator: " ").last.flatMap { Double($0) }
                    }.sorted()
                }
                XCTAssertEqual(values("shiftwork_client_queued_items"), [5, 5], page)
                XCTAssertEqual(values("shiftwork_client_batches"), [1, 2], page)
                // So does status (without CurveZMQ every client sees every client), in JSON and as a table.
                let status = try await harness.status(endpoint)
                XCTAssertEqual(status.objects("clients").map { $0.int("queued_items") }, [5, 5], "\(status)")
                XCTAssertEqual(status.objects("clients").map { $0.int("batches") }.sorted(), [1, 2], "\(status)")
                XCTAssertEqual(status.int("max_queued_items_per_client"), 5)
                XCTAssertEqual(status.int("max_batches_per_client"), 2)
                let (exit, table) = try await harness.run(["status", "--coordinator", endpoint])
                XCTAssertEqual(exit, 0, table)
                XCTAssertTrue(table.contains("5 of 5") && table.contains("2 of 2"), table)
                // What was accepted runs: with a worker, the first client's batch finishes.
                try harness.startWorker("w", endpoint: endpoint, slots: 2)
                let finished = try await harness.waitForStatus(endpoint, batch: first) { status in
                    status.objects("batches").first?.int("succeeded") == 4
                }
                XCTAssertEqual(finished.objects("batches").first?.int("succeeded"), 4, harness.allOutput)
            }
        }
    }
}
