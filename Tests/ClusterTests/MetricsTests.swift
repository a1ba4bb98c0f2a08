@testable import Cluster
import Foundation
import ShiftworkTestSupport
import XCTest

/// The coordinator's Prometheus endpoint, scraped over real HTTP on 127.0.0.1.
final class MetricsTests: XCTestCase {
    func testLabelValuesAreEscaped() {
        var page = PrometheusText()
        page.family("m", "gauge", "help", [([("worker", "a\"b\\c\nd")], 1.5), ([], 3)])
        XCTAssertEqual(page.text, "# HELP m help\n# TYPE m gauge\nm{worker=\"a\\\"b\\\\c\\nd\"} 1.5\nm 3\n")
    }

    func testTheCoordinatorExportsCountersAndGaugesInPrometheusTextFormat() async throws {
        let harness = try ClusterHarness()
        let server = try TestHTTPServer()
        do {
            let coordinator = try harness.launch("coordinator", ["coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                                                                  "--metrics-listen", "127.0.0.1:0"])
            let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
            let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
            let endpoint = try XCTUnwrap(endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
            let metricsURL = try XCTUnwrap(metricsLine?.components(separatedBy: "metrics on ").last, coordinator.outputText)
            try harness.startWorker("metered", endpoint: endpoint, slots: 2)
            var urls: [String] = []
            for index in 0..<2 {
                let bytes = try SyntheticImages.make(width: 40, height: 30, format: .jpeg, seed: UInt64(index))
                server.serve(path: "/m\(index).jpg", body: bytes, contentType: "image/jpeg")
                urls.append(server.url("/m\(index).jpg"))
            }
            let (status, output) = try await harness.run(["submit"] + urls + ["--out", harness.scratch.path, "--coordinator", endpoint])
            XCTAssertEqual(status, 0, output)

            let response = try await TestHTTPClient.get(metricsURL)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
            let body = response.text
            for line in ["shiftwork_workers 1", "shiftwork_worker_slots{worker=\"metered\"} 2",
                         "shiftwork_tasks_completed_total 4", "shiftwork_worker_tasks_completed_total{worker=\"metered\"} 4",
                         "shiftwork_batches_accepted_total 1", "shiftwork_tasks_queued 0", "# TYPE shiftwork_tasks_failed_total counter"] {
                XCTAssertTrue(body.contains(line + "\n"), "missing '\(line)' in:\n\(body)")
            }
            let missing = try await TestHTTPClient.get(metricsURL.replacingOccurrences(of: "/metrics", with: "/nope"))
            XCTAssertEqual(missing.status, 404)
        } catch {
            server.shutdown()
            await harness.stopAll()
            throw error
        }
        server.shutdown()
        await harness.stopAll()
    }
}
