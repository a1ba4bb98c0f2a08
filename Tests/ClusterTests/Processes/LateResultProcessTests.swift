import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A result that arrives just after its task timeout is used, not thrown away (first valid result wins,
/// `Dispatcher+LateResults`), over real processes: a coordinator with a 2 s task timeout, a worker whose
/// link to it stalls (a relay that holds its traffic back) while it downloads from an origin slower than
/// that, a second worker where a retry would go, and the `shiftwork` CLI. Which messages cross is fixed by
/// the relay, not by timing: the coordinator's cancel is held until the worker has sent its results.
final class LateResultProcessTests: ClusterTestCase {
    func testADownloadThatFinishesJustAfterItsTimeoutIsUsedOnceAndNotRunAgain() async throws {
        let bytes = try SyntheticImages.make(width: 96, height: 64, format: .jpeg, seed: 21)
        // The first request is answered after 3 s, more than the task timeout; any later one at once (a
        // retry, which this test shows never comes).
        let slow = TestHTTPServer.Response.slow(
            contentType: "image/jpeg", body: bytes, chunkSize: bytes.count,
            interval: .zero, initialDelay: .seconds(3))
        server.serve(
            path: "/late.jpg",
            response: .sequence([slow], then: .content(status: .ok, contentType: "image/jpeg", body: bytes)))
        // A worker timeout far above the stall: the held worker is late, not dead.
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator([
            "--task-timeout", "2", "--worker-timeout", "60",
        ])
        let port = try XCTUnwrap(endpoint.split(separator: ":").last.flatMap { Int($0) }, endpoint)
        let relay = try RecordingTCPRelay(upstreamPort: port)
        defer { relay.stop() }
        let late = try harness.launch(
            "late",
            [
                "worker", "--slots", "1", "--worker-id", "late", "--log-level", "debug",
                "--coordinator", relay.endpoint,
            ])
        _ = try await harness.waitForStatus(endpoint) { $0.objects("workers").count == 1 }

        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit",
            [
                "submit", server.url("/late.jpg"), "--out", out.path, "--retries", "1",
                "--json", "--coordinator", endpoint,
            ])
        let deadline = ContinuousClock.now + .seconds(30)
        while server.requestCount(path: "/late.jpg") == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(server.requestCount(path: "/late.jpg"), 1, "the download started:\n\(harness.allOutput)")
        // From now on the link stalls, both ways; a second worker is there for a retry.
        relay.holding = true
        let spare = try harness.launch(
            "spare",
            [
                "worker", "--slots", "1", "--worker-id", "spare", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        _ = try await harness.waitForStatus(endpoint) { $0.objects("workers").count == 2 }

        // The coordinator times the download out and sends its cancel (held in the relay); the worker, which
        // has not heard of it, finishes the download and its chained tilt-shift and sends both results (held).
        let coordinator = try XCTUnwrap(harness.processes.first)
        let timedOut = await coordinator.waitForLine { $0.contains("task timed out; cancelling it on its worker") }
        XCTAssertNotNil(timedOut, "the task timed out:\n\(coordinator.outputText)")
        let sent = await late.waitForLine { line in
            line.contains("task succeeded, result sent") && line.contains("kind=tilt-shift")
        }
        XCTAssertNotNil(sent, "the worker finished the photo:\n\(late.outputText)")
        XCTAssertEqual(lines(of: late, with: "task succeeded, result sent").count, 2, late.outputText)

        // The link recovers: the results reach the coordinator, then the cancel reaches the worker.
        relay.holding = false
        let status = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, "\(submit.outputText)\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(submit.outputText.utf8)) as? [String: Any], submit.outputText)
        XCTAssertEqual(document.int("succeeded"), 1, submit.outputText)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 1, "one output")

        // Used once: one attempt, no failed one, one request to the origin, nothing sent to the spare worker.
        let batchID = try XCTUnwrap(document["batch"] as? String)
        let batch = try await harness.status(endpoint, batch: batchID)
        let item = try XCTUnwrap(batch.objects("batches").first?.objects("item_states").first, "\(batch)")
        XCTAssertEqual(item["state"] as? String, "succeeded", "\(item)")
        XCTAssertEqual(item.int("attempts"), 1, "not run again: \(item)\n\(harness.allOutput)")
        XCTAssertTrue(item.objects("failed_attempts").isEmpty, "the timed-out attempt did not fail: \(item)")
        XCTAssertEqual(server.requestCount(path: "/late.jpg"), 1, "downloaded once")
        XCTAssertTrue(lines(of: spare, with: "task received").isEmpty, spare.outputText)

        let page = try await TestHTTPClient.get(metricsURL).text
        XCTAssertEqual(MetricsPage.value("shiftwork_late_results_used_total", in: page), 1, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_resent_total{reason=\"timed_out\"}", in: page), 0, page)
        XCTAssertEqual(
            MetricsPage.value("shiftwork_tasks_completed_total", in: page), 2, "a download and a tilt-shift: \(page)")

        // The cancel the worker gets at last names a task it no longer runs, and is ignored; no slot is left taken.
        let ignored = await late.waitForLine { $0.contains("ignored a cancel for a task this worker no longer runs") }
        XCTAssertNotNil(ignored, late.outputText)
        let idle = try await harness.waitForStatus(endpoint) { $0.int("running_tasks") == 0 }
        XCTAssertEqual(idle.int("running_tasks"), 0, harness.allOutput)
    }

    private func lines(of process: ManagedProcess, with text: String) -> [Substring] {
        process.outputText.split(separator: "\n").filter { $0.contains(text) }
    }
}
