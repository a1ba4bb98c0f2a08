import Cluster
import Foundation
import ShiftworkTestSupport
import Wire
import XCTest

/// `submit --key` and `--priority` through real processes: a submission sent again with its key
/// attaches to the batch it made (across a coordinator restart, from the journal), and a priority or a
/// key that cannot be used is refused with what is allowed, by the CLI and by the coordinator.
final class IdempotentSubmitTests: ClusterTestCase {
    private func startCoordinator(_ name: String, endpoint: String, dataDirectory: URL) async throws -> ManagedProcess {
        let coordinator = try harness.launch(
            name,
            [
                "coordinator", "--listen", endpoint, "--insecure", "--data-dir", dataDirectory.path,
            ])
        guard await coordinator.waitForLine(where: { $0.contains("listening on") }) != nil else {
            throw HarnessError("\(name) did not start:\n\(coordinator.outputText)")
        }
        return coordinator
    }

    private func batchID(of submit: ManagedProcess) async throws -> String {
        let line = await submit.waitForLine { $0.hasPrefix("batch b-") }
        return String(try XCTUnwrap(line?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))
    }

    func testSubmittingAgainWithTheSameKeyAttachesToTheBatchEvenAfterACoordinatorRestart() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        let urls = try server.serveSyntheticImages(3, prefix: "keyed")
        let out1 = harness.scratch.appendingPathComponent("out-1")
        // No worker yet: the batch waits, as a submission that timed out on the client's side would.
        let original = try harness.launch(
            "submit-1",
            ["submit"] + urls + [
                "--key", "nightly:2026-11-23", "--priority", "high",
                "--out", out1.path, "--coordinator", endpoint,
            ])
        let batchID = try await batchID(of: original)
        await first.kill9()
        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)

        let out2 = harness.scratch.appendingPathComponent("out-2")
        let again = try harness.launch(
            "submit-2",
            ["submit"] + urls + [
                "--key", "nightly:2026-11-23",
                "--out", out2.path, "--coordinator", endpoint,
            ])
        let againID = try await self.batchID(of: again)
        XCTAssertEqual(againID, batchID, "the same key attaches to the same batch")
        XCTAssertTrue(again.outputText.contains("attached"), again.outputText)
        try harness.startWorker("w1", endpoint: endpoint)
        let againStatus = await again.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(againStatus, 0, harness.allOutput)
        let originalStatus = await original.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(originalStatus, 0, harness.allOutput)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: out2.path).count, 3,
            "the attached client gets every output")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out1.path).count, 3)
        for index in 0..<3 {
            XCTAssertEqual(
                server.requestCount(path: TestHTTPServer.syntheticImagePath(index, prefix: "keyed")), 1,
                "image \(index) ran once")
        }
        let status = try await harness.status(endpoint)
        let batches = status.objects("batches")
        XCTAssertEqual(batches.map { $0["id"] as? String }, [batchID], "one batch, not two")
        XCTAssertEqual(batches.first?.int("priority"), 5, "the priority came back from the journal")
        XCTAssertEqual(batches.first?["idempotency_key"] as? String, "nightly:2026-11-23")

        // Another key makes another batch.
        let other = try await harness.run([
            "submit", urls[0], "--key", "nightly:2026-11-24", "--out",
            harness.scratch.appendingPathComponent("out-3").path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(other.status, 0, other.output)
        XCTAssertFalse(other.output.contains(batchID), other.output)
    }

    func testAPriorityOrKeyThatCannotBeUsedIsRefusedWithWhatIsAllowed() async throws {
        let endpoint = try await harness.startCoordinator()
        for (option, value, expected) in [
            ("--priority", "11", "-10...10"), ("--priority", "urgent", "low, normal, high"),
            ("--key", "two words", "A-Z a-z 0-9"),
            ("--key", String(repeating: "k", count: 129), "more than 128"),
        ] {
            let (status, output) = try await harness.run([
                "submit", server.url("/x.jpg"), option, value, "--coordinator", endpoint,
            ])
            XCTAssertEqual(status, 1, output)
            XCTAssertTrue(output.contains(option) && output.contains(expected), "\(option) \(value): \(output)")
        }
        // A client that does not check: the coordinator refuses, saying the range.
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(20)) { client in
            var submit = SubmitBatch(requestID: "", items: [BatchItem(source: "noop")], kind: .noop)
            submit.priority = 42
            do {
                for try await _ in await client.submit(submit) {}
                XCTFail("a priority of 42 must be refused")
            } catch let error as ClusterClientError {
                XCTAssertTrue("\(error)".contains("-10...10"), "\(error)")
            }
        }
    }
}
