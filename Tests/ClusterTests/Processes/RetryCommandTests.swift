import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `shiftwork retry` over real processes: a coordinator, a worker, the CLI, and an origin on 127.0.0.1
/// that fails an item first (HTTP 404) and serves it afterwards. The re-run item's output arrives once,
/// the succeeded item is not fetched again, and a retry accepted before a coordinator restart completes
/// after it.
final class RetryCommandTests: ClusterTestCase {
    private func image(_ seed: UInt64) throws -> [UInt8] {
        try SyntheticImages.make(width: 96, height: 64, format: .jpeg, seed: seed)
    }

    private func files(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Submits `urls` and waits for the end; returns the batch ID (the submission's exit status must be `expected`).
    private func submitAndFinish(_ urls: [String], _ endpoint: String, expecting expected: Int32) async throws -> String
    {
        let out = harness.scratch.appendingPathComponent("submitted")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint],
            timeout: .seconds(120))
        XCTAssertEqual(status, expected, output)
        return String(
            try XCTUnwrap(
                output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?
                    .split(separator: " ")[1].dropLast(), "no batch line:\n\(harness.allOutput)"))
    }

    func testRetryReRunsTheFailedItemOnceKeepsTheSucceededOneAndRefusesWhatItCannotDo() async throws {
        server.serve(path: "/kept.jpg", body: try image(1), contentType: "image/jpeg")
        server.serve(path: "/later.jpg", body: Array("not yet\n".utf8), contentType: "text/plain", status: .notFound)
        let endpoint = try await harness.startCoordinator()
        try harness.startWorker("w-1", endpoint: endpoint, slots: 1)
        _ = try await harness.waitForStatus(endpoint) { $0.objects("workers").count == 1 }
        let batchID = try await submitAndFinish(
            [server.url("/kept.jpg"), server.url("/later.jpg")], endpoint, expecting: 1)

        // Refusals, each saying what was wrong.
        let unknown = try await harness.run(["retry", "b-nosuch", "--coordinator", endpoint])
        XCTAssertNotEqual(unknown.status, 0, unknown.output)
        XCTAssertTrue(unknown.output.contains("no batch b-nosuch"), unknown.output)
        let noItem = try await harness.run(["retry", batchID, "--items", "nosuch", "--coordinator", endpoint])
        XCTAssertNotEqual(noItem.status, 0, noItem.output)
        XCTAssertTrue(noItem.output.contains("has no item nosuch"), noItem.output)
        let succeeded = try await harness.run(["retry", batchID, "--items", "0", "--coordinator", endpoint])
        XCTAssertNotEqual(succeeded.status, 0, succeeded.output)
        XCTAssertTrue(succeeded.output.contains("succeeded: its output is kept"), succeeded.output)

        // The origin serves it now: the retry succeeds it, and only it.
        server.serve(path: "/later.jpg", body: try image(2), contentType: "image/jpeg")
        let out = harness.scratch.appendingPathComponent("retried")
        let (status, output) = try await harness.run(
            ["retry", batchID, "--out", out.path, "--coordinator", endpoint],
            timeout: .seconds(120))
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("batch \(batchID): retrying 1 of its 2 items"), output)
        XCTAssertTrue(output.contains("1 item: 1 succeeded, 0 failed"), output)
        XCTAssertEqual(files(in: out).count, 1, "the re-run item's output, once: \(files(in: out))")
        XCTAssertEqual(server.requestCount(path: "/kept.jpg"), 1, "the succeeded item is not fetched again")
        XCTAssertEqual(server.requestCount(path: "/later.jpg"), 2)

        let report = try await harness.status(endpoint, batch: batchID)
        let batch = try XCTUnwrap(report.objects("batches").first)
        XCTAssertEqual(batch.int("succeeded"), 2, "\(batch)")
        XCTAssertEqual(batch.int("failed"), 0, "\(batch)")
        let item = try XCTUnwrap(batch.objects("item_states").first { $0.int("index") == 1 })
        XCTAssertEqual(item["state"] as? String, "succeeded")
        XCTAssertEqual(item.int("attempts"), 2, "the 404, then the retry: \(item)")
        let failed = item.objects("failed_attempts")
        XCTAssertEqual(failed.count, 1, "\(failed)")
        XCTAssertEqual(failed.first?["retried"] as? Bool, true)
        XCTAssertTrue((failed.first?["error"] as? String ?? "").contains("404"), "\(failed)")

        // Nothing left to retry: said, and not an error.
        let again = try await harness.run(["retry", batchID, "--coordinator", endpoint])
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertTrue(again.output.contains("nothing to retry"), again.output)
        XCTAssertEqual(server.requestCount(path: "/later.jpg"), 2)
    }

    func testARetryAcceptedBeforeACoordinatorRestartCompletesAfterIt() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        func startCoordinator(_ name: String) async throws -> ManagedProcess {
            let coordinator = try harness.launch(
                name,
                [
                    "coordinator", "--listen", endpoint, "--insecure", "--data-dir", data.path, "--worker-timeout", "2",
                ])
            guard await coordinator.waitForLine(where: { $0.contains("listening on") }) != nil else {
                throw HarnessError("\(name) did not start:\n\(coordinator.outputText)")
            }
            return coordinator
        }
        server.serve(path: "/kept.jpg", body: try image(3), contentType: "image/jpeg")
        server.serve(path: "/later.jpg", body: Array("not yet\n".utf8), contentType: "text/plain", status: .notFound)
        let first = try await startCoordinator("coordinator-1")
        let worker = try harness.startWorker("worker-1", endpoint: endpoint, slots: 1)
        _ = try await harness.waitForStatus(endpoint) { $0.objects("workers").count == 1 }
        let batchID = try await submitAndFinish(
            [server.url("/kept.jpg"), server.url("/later.jpg")], endpoint, expecting: 1)

        // No worker while the retry is accepted: its item is certainly unfinished when the coordinator dies.
        _ = await worker.stop()
        server.serve(path: "/later.jpg", body: try image(4), contentType: "image/jpeg")
        let out = harness.scratch.appendingPathComponent("retried")
        let retry = try harness.launch("retry", ["retry", batchID, "--out", out.path, "--coordinator", endpoint])
        let accepted = await retry.waitForLine { $0.contains("retrying") }
        XCTAssertNotNil(accepted, retry.outputText)
        let running = try await harness.status(endpoint, batch: batchID)
        XCTAssertEqual(
            running.objects("batches").first?.int("succeeded"), 1, "the retried item is unfinished again: \(running)")
        await first.kill9()
        _ = try await startCoordinator("coordinator-2")
        try harness.startWorker("worker-2", endpoint: endpoint, slots: 1)

        let status = await retry.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(retry.outputText.contains("1 item: 1 succeeded, 0 failed"), retry.outputText)
        XCTAssertEqual(files(in: out).count, 1, "the re-run item's output, once: \(files(in: out))")
        let report = try await harness.status(endpoint, batch: batchID)
        let batch = try XCTUnwrap(report.objects("batches").first)
        XCTAssertEqual(batch.int("succeeded"), 2, "replay kept the first item and ran the retried one: \(batch)")
        XCTAssertEqual(batch.int("failed"), 0, "\(batch)")
        XCTAssertEqual(server.requestCount(path: "/kept.jpg"), 1, "the succeeded item never runs again")
    }
}
