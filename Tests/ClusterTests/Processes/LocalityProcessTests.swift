import Foundation
import ShiftworkTestSupport
import XCTest

/// Locality over real processes: every tilt-shift runs where its download ran, and a worker that no
/// longer holds the bytes still gets them.
final class LocalityProcessTests: ClusterTestCase {
    /// Runs a batch of `count` images on two workers started with `workerArguments`, and returns the
    /// coordinator's metrics page afterwards.
    private func runBatch(_ count: Int, workerArguments: [String]) async throws -> String {
        let coordinator = try harness.launch("coordinator", ["coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                                                              "--metrics-listen", "127.0.0.1:0"])
        let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
        let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
        let endpoint = try XCTUnwrap(endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
        let metricsURL = try XCTUnwrap(metricsLine?.components(separatedBy: "metrics on ").last, coordinator.outputText)
        for name in ["near", "far"] {
            _ = try harness.launch(name, ["worker", "--slots", "2", "--worker-id", name, "--coordinator", endpoint] + workerArguments)
        }
        let urls = try server.serveSyntheticImages(count, prefix: "local")
        let out = harness.scratch.appendingPathComponent("local")
        let (status, output) = try await harness.run(["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, count)
        return try await TestHTTPClient.get(metricsURL).text
    }

    private func metric(_ name: String, in page: String) -> Int? {
        page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) }
    }

    func testEveryTiltShiftRunsWhereItsDownloadRan() async throws {
        let page = try await runBatch(6, workerArguments: [])
        XCTAssertEqual(metric("shiftwork_tasks_local_input_total", in: page), 6, page)
        XCTAssertEqual(metric("shiftwork_tasks_local_input_missed_total", in: page), 0, page)
    }

    func testAWorkerWithoutItsInputGetsTheBytes() async throws {
        // No cache at all: every reference misses, and every tilt-shift is sent again with the bytes.
        let page = try await runBatch(4, workerArguments: ["--input-cache-mb", "0"])
        XCTAssertEqual(metric("shiftwork_tasks_local_input_total", in: page), 4, page)
        XCTAssertEqual(metric("shiftwork_tasks_local_input_missed_total", in: page), 4, page)
    }
}
