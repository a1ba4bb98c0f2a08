import Foundation
import Logging
import Prometheus
import ShiftworkTestSupport
import XCTest

@testable import Cluster

/// The coordinator's metrics (swift-metrics into a swift-prometheus registry of its own), and its
/// Prometheus endpoint scraped over real HTTP on 127.0.0.1.
final class MetricsTests: XCTestCase {
    /// Every metric the coordinator exported before swift-metrics, with its type.
    static let types: [String: String] = [
        "shiftwork_workers": "gauge", "shiftwork_worker_slots": "gauge", "shiftwork_worker_running_tasks": "gauge",
        "shiftwork_worker_tasks_completed_total": "counter", "shiftwork_worker_tasks_failed_total": "counter",
        "shiftwork_tasks_queued": "gauge", "shiftwork_tasks_running": "gauge",
        "shiftwork_tasks_completed_total": "counter",
        "shiftwork_tasks_failed_total": "counter", "shiftwork_tasks_per_second": "gauge",
        "shiftwork_batches_accepted_total": "counter", "shiftwork_batches_running": "gauge",
        "shiftwork_tasks_local_input_total": "counter", "shiftwork_tasks_local_input_missed_total": "counter",
        "shiftwork_assignments_lost_total": "counter", "shiftwork_messages_dropped_total": "counter",
        "shiftwork_peers_refused_total": "counter",
        "shiftwork_tasks_input_lost_total": "counter", "shiftwork_download_bytes_received_total": "counter",
        "shiftwork_output_bytes_received_total": "counter", "shiftwork_tasks_chained_total": "counter",
        "shiftwork_late_results_used_total": "counter",
        "shiftwork_tasks_resent_total": "counter",
        "shiftwork_tasks_asked_back_total": "counter", "shiftwork_tasks_given_back_total": "counter",
    ]

    /// The page's samples: `name{labels}` → value.
    static func samples(_ page: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in page.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    private func report(completed: UInt64, worker: String = "w1", workerCompleted: UInt64 = 0) -> MetricsReport {
        var report = MetricsReport()
        report.workers[worker] = MetricsReport.WorkerFigures(
            slots: 2, runningTasks: 1, tasksCompleted: workerCompleted, tasksFailed: 0)
        report.tasksCompleted = completed
        report.tasksPerSecond = 2.5
        report.peersRefused = 4
        return report
    }

    func testEveryMetricKeepsItsNameTypeAndHelpAndLabelValuesAreEscaped() {
        var metrics = CoordinatorMetrics(registry: PrometheusCollectorRegistry())
        var report = report(completed: 3, worker: "a\"b\\c\nd", workerCompleted: 3)
        report.resends.record(.assignmentLost)
        metrics.record(report)
        let page = metrics.text
        for (name, type) in Self.types {
            XCTAssertTrue(page.contains("# TYPE \(name) \(type)\n"), "missing \(name) (\(type)) in:\n\(page)")
            XCTAssertTrue(
                page.contains("# HELP \(name) \(CoordinatorMetrics.help[name] ?? "?")\n"),
                "no help for \(name) in:\n\(page)")
        }
        XCTAssertEqual(page.components(separatedBy: "# TYPE ").count - 1, Self.types.count, page)
        let samples = Self.samples(page)
        XCTAssertEqual(samples[#"shiftwork_worker_slots{worker="a\"b\\c\nd"}"#], 2, page)
        XCTAssertEqual(samples["shiftwork_tasks_per_second"], 2.5, page)
        XCTAssertEqual(samples["shiftwork_peers_refused_total"], 4, page)
        XCTAssertEqual(samples[#"shiftwork_tasks_resent_total{reason="assignment_lost"}"#], 1, page)
        XCTAssertEqual(
            samples[#"shiftwork_tasks_resent_total{reason="handed_back"}"#], 0, "every reason has a series: \(page)")
    }

    func testCountersFollowTheirSourceAndADepartedWorkersSeriesGo() {
        var metrics = CoordinatorMetrics(registry: PrometheusCollectorRegistry())
        metrics.record(report(completed: 3, workerCompleted: 3))
        metrics.record(report(completed: 5, workerCompleted: 5))
        var samples = Self.samples(metrics.text)
        XCTAssertEqual(samples["shiftwork_tasks_completed_total"], 5)
        XCTAssertEqual(samples[#"shiftwork_worker_tasks_completed_total{worker="w1"}"#], 5)
        // The worker registered again: its record (and counter) start over.
        metrics.record(report(completed: 6, workerCompleted: 1))
        samples = Self.samples(metrics.text)
        XCTAssertEqual(samples["shiftwork_tasks_completed_total"], 6)
        XCTAssertEqual(samples[#"shiftwork_worker_tasks_completed_total{worker="w1"}"#], 1)
        metrics.record(report(completed: 6, worker: "w2"))
        samples = Self.samples(metrics.text)
        XCTAssertNil(samples[#"shiftwork_worker_slots{worker="w1"}"#], metrics.text)
        XCTAssertEqual(samples[#"shiftwork_worker_slots{worker="w2"}"#], 2, metrics.text)
        XCTAssertEqual(samples["shiftwork_workers"], 1)
    }

    func testCoordinatorsInOneProcessKeepTheirOwnMetrics() async throws {
        let logger = Logger(label: "metrics-test")
        let first = try Coordinator(
            configuration: CoordinatorConfiguration(listen: ["inproc://metrics-a-\(UUID())"]), logger: logger)
        let second = try Coordinator(
            configuration: CoordinatorConfiguration(listen: ["inproc://metrics-b-\(UUID())"]), logger: logger)
        try await first.start()
        try await second.start()
        XCTAssertFalse(first.metricsRegistry === second.metricsRegistry)
        var one = CoordinatorMetrics(registry: first.metricsRegistry)
        one.record(report(completed: 7))  // recorded into the first coordinator's registry only
        let firstPage = await first.metrics()
        let secondPage = await second.metrics()
        await first.stop()
        await second.stop()
        XCTAssertEqual(Self.samples(firstPage)["shiftwork_tasks_completed_total"], 7, firstPage)
        XCTAssertEqual(Self.samples(secondPage)["shiftwork_tasks_completed_total"], 0, secondPage)
        XCTAssertEqual(Self.samples(secondPage)["shiftwork_workers"], 0, secondPage)
    }

    func testTheCoordinatorExportsCountersAndGaugesInPrometheusTextFormat() async throws {
        let harness = try ClusterHarness()
        let server = try TestHTTPServer()
        do {
            let coordinator = try harness.launch(
                "coordinator",
                [
                    "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                    "--metrics-listen", "127.0.0.1:0",
                ])
            let endpointLine = await coordinator.waitForLine { $0.contains("listening on") }
            let metricsLine = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
            let endpoint = try XCTUnwrap(
                endpointLine?.components(separatedBy: "listening on ").last, coordinator.outputText)
            let metricsURL = try XCTUnwrap(
                metricsLine?.components(separatedBy: "metrics on ").last, coordinator.outputText)
            try harness.startWorker("metered", endpoint: endpoint, slots: 2)
            var urls: [String] = []
            for index in 0..<2 {
                let bytes = try SyntheticImages.make(width: 40, height: 30, format: .jpeg, seed: UInt64(index))
                server.serve(path: "/m\(index).jpg", body: bytes, contentType: "image/jpeg")
                urls.append(server.url("/m\(index).jpg"))
            }
            let (status, output) = try await harness.run(
                ["submit"] + urls + ["--out", harness.scratch.path, "--coordinator", endpoint])
            XCTAssertEqual(status, 0, output)

            let response = try await TestHTTPClient.get(metricsURL)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
            let body = response.text
            let samples = Self.samples(body)
            for (series, value) in [
                "shiftwork_workers": 1.0, "shiftwork_worker_slots{worker=\"metered\"}": 2,
                "shiftwork_tasks_completed_total": 4, "shiftwork_worker_tasks_completed_total{worker=\"metered\"}": 4,
                "shiftwork_batches_accepted_total": 1, "shiftwork_tasks_queued": 0,
            ] {
                XCTAssertEqual(samples[series], value, "\(series) in:\n\(body)")
            }
            for (name, type) in Self.types where name != "shiftwork_peers_refused_total" {
                XCTAssertTrue(body.contains("# TYPE \(name) \(type)\n"), "missing \(name) (\(type)) in:\n\(body)")
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
