import Foundation
import ShiftworkTestSupport
import XCTest

/// Locality over real processes: every tilt-shift runs where its download ran, and a worker that no
/// longer holds the bytes still gets them.
final class LocalityProcessTests: ClusterTestCase {
    /// Runs a batch of `count` images on two workers started with `workerArguments`, and returns the
    /// coordinator's metrics page afterwards.
    private func runBatch(_ count: Int, workerArguments: [String]) async throws -> String {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        for name in ["near", "far"] {
            _ = try harness.launch(
                name, ["worker", "--slots", "2", "--worker-id", name, "--coordinator", endpoint] + workerArguments)
        }
        let urls = try server.serveSyntheticImages(count, prefix: "local")
        let out = harness.scratch.appendingPathComponent("local")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, count)
        return try await TestHTTPClient.get(metricsURL).text
    }

    func testEveryTiltShiftRunsWhereItsDownloadRanAndNoDownloadedByteReachesTheCoordinator() async throws {
        let page = try await runBatch(6, workerArguments: [])
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_local_input_total", in: page), 6, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_local_input_missed_total", in: page), 0, page)
        // The images stayed on the workers that downloaded them; the outputs came through (no sink).
        XCTAssertEqual(MetricsPage.value("shiftwork_download_bytes_received_total", in: page), 0, page)
        XCTAssertGreaterThan(MetricsPage.value("shiftwork_output_bytes_received_total", in: page) ?? 0, 0, page)
    }

    func testAnImageLargerThanTheWorkersInputCacheFailsSayingWhatToRaise() async throws {
        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch("worker", ["worker", "--input-cache-mb", "0", "--coordinator", endpoint])
        let urls = try server.serveSyntheticImages(1, prefix: "uncached")
        let (status, output) = try await harness.run(
            ["submit"] + urls + [
                "--out", harness.scratch.appendingPathComponent("u").path,
                "--coordinator", endpoint,
            ])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("input cache") && output.contains("--input-cache-mb"), output)
    }

    /// Lineage: the worker that holds a downloaded image dies while filtering it (a tilt-shift chained to
    /// its download); the download runs again on another worker, chained again, and the item succeeds
    /// there, without a retry (`--retries 0`): a lost input is not a failed attempt.
    func testAWorkerKilledAfterItsDownloadMakesTheDownloadRunAgainElsewhere() async throws {
        // The killed worker is declared dead after 2 s of silence, not the default 5.
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator(["--worker-timeout", "2"])
        let doomed = try harness.launch(
            "doomed",
            [
                "worker", "--slots", "1", "--worker-id", "doomed", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        // Large enough that its filter runs for a while after the download.
        let bytes = try SyntheticImages.make(width: 6000, height: 4000, format: .jpeg, seed: 7)
        server.serve(path: "/big.jpg", body: bytes, contentType: "image/jpeg")
        let out = harness.scratch.appendingPathComponent("lineage")
        let submit = try harness.launch(
            "submit",
            [
                "submit", server.url("/big.jpg"), "--out", out.path, "--retries", "0",
                "--coordinator", endpoint,
            ])
        let filtering = await doomed.waitForLine(timeout: .seconds(120)) {
            $0.contains("task started") && $0.contains("tilt-shift")
        }
        XCTAssertNotNil(filtering, doomed.outputText)
        // Killed once the coordinator has the download's result (the tilt-shift is adopted as running
        // there), not while that result may still be leaving the worker.
        var adopted = false
        for _ in 0..<600 where !adopted {
            let page = try await TestHTTPClient.get(metricsURL).text
            adopted = (MetricsPage.value("shiftwork_tasks_chained_total", in: page) ?? 0) >= 1
            if !adopted { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertTrue(adopted, harness.allOutput)
        await doomed.kill9()
        _ = try harness.launch(
            "survivor",
            [
                "worker", "--slots", "1", "--worker-id", "survivor", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        let status = await submit.waitForExit(timeout: .seconds(180))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 1)
        let page = try await TestHTTPClient.get(metricsURL).text
        XCTAssertGreaterThanOrEqual(MetricsPage.value("shiftwork_tasks_input_lost_total", in: page) ?? 0, 1, page)
        XCTAssertEqual(
            MetricsPage.value("shiftwork_tasks_chained_total", in: page), 2, "chained on both workers: \(page)")
        XCTAssertEqual(MetricsPage.value("shiftwork_download_bytes_received_total", in: page), 0, page)
    }
}
