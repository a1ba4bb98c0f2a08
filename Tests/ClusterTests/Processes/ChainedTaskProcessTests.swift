import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Chained tasks over real processes: a photo's tilt-shift runs right after its download on the same
/// worker without an assignment of its own (`shiftwork_tasks_chained_total`), and every rule of the
/// two-step flow still holds: a failed download fails only its item, a cancel reaches the chained
/// tilt-shift, and a worker that does not accept chained tasks gets the two steps. (A worker killed while
/// filtering a chained tilt-shift: `LocalityProcessTests`.)
final class ChainedTaskProcessTests: ClusterTestCase {
    private func metrics(_ url: String) async throws -> String { try await TestHTTPClient.get(url).text }

    /// A chained-tasks setting the worker does not know is refused at start, naming the value and the choices.
    func testAnUnknownChainedTasksSettingIsRefusedSayingTheChoices() async throws {
        let endpoint = "tcp://127.0.0.1:1"
        let (envStatus, envOutput) = try await harness.run(
            ["worker", "--coordinator", endpoint],
            environment: ["SHIFTWORK_CHAINED_TASKS": "sometimes"])
        XCTAssertNotEqual(envStatus, 0, envOutput)
        XCTAssertTrue(
            envOutput.contains("SHIFTWORK_CHAINED_TASKS=sometimes") && envOutput.contains("on, off, together"),
            envOutput)
        let (optionStatus, optionOutput) = try await harness.run([
            "worker", "--chained-tasks", "sometimes", "--coordinator", endpoint,
        ])
        XCTAssertNotEqual(optionStatus, 0, optionOutput)
        XCTAssertTrue(optionOutput.contains("'sometimes'") && optionOutput.contains("'together'"), optionOutput)
    }

    func testEveryPhotoRunsChainedAndAWorkerWithoutTheCapabilityGetsTheTwoSteps() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        let chained = try harness.launch(
            "chained",
            [
                "worker", "--slots", "2", "--worker-id", "chained", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        let urls = try server.serveSyntheticImages(6, prefix: "chain")
        let sink = harness.scratch.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--sink", sink.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: sink.path).filter { !$0.hasPrefix(".") }.count, 6)
        var page = try await metrics(metricsURL)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_chained_total", in: page), 6, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_local_input_total", in: page), 6, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_download_bytes_received_total", in: page), 0, page)
        // One assignment a photo: the worker received the downloads; each tilt-shift started after its download.
        XCTAssertEqual(lines(of: chained, with: "task received").count, 6, chained.outputText)
        XCTAssertEqual(
            lines(of: chained, with: "chained tilt-shift taken up after its download").count, 6, chained.outputText)

        // Without a sink (`--out`): the outputs come back through the coordinator, chained as well.
        let out = harness.scratch.appendingPathComponent("out")
        let (outStatus, outOutput) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(outStatus, 0, outOutput)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 6)
        page = try await metrics(metricsURL)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_chained_total", in: page), 12, page)

        // A worker that does not announce chained tasks (as an older one): two steps, same outcome.
        _ = await chained.stop()
        let twoStep = try harness.launch(
            "two-step",
            [
                "worker", "--slots", "2", "--worker-id", "two-step", "--log-level", "debug",
                "--coordinator", endpoint,
            ], environment: ["SHIFTWORK_CHAINED_TASKS": "off"])
        let apart = harness.scratch.appendingPathComponent("apart")
        let (apartStatus, apartOutput) = try await harness.run(
            ["submit"] + urls + ["--out", apart.path, "--coordinator", endpoint])
        XCTAssertEqual(apartStatus, 0, "\(apartOutput)\n\(harness.allOutput)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: apart.path).count, 6)
        page = try await metrics(metricsURL)
        XCTAssertEqual(
            MetricsPage.value("shiftwork_tasks_chained_total", in: page), 12, "nothing chained to it: \(page)")
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_local_input_total", in: page), 18, page)
        XCTAssertEqual(
            lines(of: twoStep, with: "task received").count, 12, "two assignments a photo:\n\(twoStep.outputText)")
    }

    private func lines(of process: ManagedProcess, with text: String) -> [Substring] {
        process.outputText.split(separator: "\n").filter { $0.contains(text) }
    }

    func testAFailedDownloadRunsNoTiltShiftAndFailsOnlyItsItemWithItsCause() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        _ = try harness.launch(
            "worker",
            [
                "worker", "--slots", "2", "--worker-id", "worker", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        var urls = try server.serveSyntheticImages(2, prefix: "fine")
        server.serve(
            path: "/missing.jpg",
            response: .content(status: .notFound, contentType: "text/plain", body: Array("no".utf8)))
        urls.append(server.url("/missing.jpg"))
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--retries", "0", "--coordinator", endpoint])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("3 items: 2 succeeded, 1 failed"), output)
        XCTAssertTrue(output.contains("404"), "the item fails with its download's cause:\n\(output)")
        let page = try await metrics(metricsURL)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_chained_total", in: page), 2, page)
        let worker = try XCTUnwrap(harness.processes.first { $0.name == "worker" })
        let tiltShiftsStarted = lines(of: worker, with: "task started").filter { $0.contains("tilt-shift") }
        XCTAssertEqual(tiltShiftsStarted.count, 2, "no tilt-shift ran for the failed download:\n\(worker.outputText)")
    }

    func testACancelReachesTheChainedTiltShiftWhileItFilters() async throws {
        try await cancelWhileFiltering(environment: [:])
    }

    /// With the two results in one message (`SHIFTWORK_CHAINED_TASKS=together`), the coordinator still
    /// counts the download as running while the tilt-shift filters: its cancel names the download, and
    /// reaches the tilt-shift.
    func testACancelReachesTheChainedTiltShiftWhoseDownloadsResultIsHeldBack() async throws {
        try await cancelWhileFiltering(environment: ["SHIFTWORK_CHAINED_TASKS": "together"])
    }

    private func cancelWhileFiltering(environment: [String: String]) async throws {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", "1", "--worker-id", "worker", "--log-level", "debug",
                "--coordinator", endpoint,
            ], environment: environment)
        let bytes = try SyntheticImages.make(width: 6000, height: 4000, format: .jpeg, seed: 3)
        server.serve(path: "/big.jpg", body: bytes, contentType: "image/jpeg")
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit", server.url("/big.jpg"), "--out", out.path, "--coordinator", endpoint])
        let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = try XCTUnwrap(
            batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)")
        let filtering = await worker.waitForLine(timeout: .seconds(120)) {
            $0.contains("task started") && $0.contains("tilt-shift")
        }
        XCTAssertNotNil(filtering, worker.outputText)
        let (cancelStatus, cancelOutput) = try await harness.run(["cancel", String(batchID), "--coordinator", endpoint])
        XCTAssertEqual(cancelStatus, 0, cancelOutput)
        let cancelled = await worker.waitForLine(timeout: .seconds(30)) { $0.contains("cancel requested") }
        XCTAssertNotNil(cancelled, "the CancelTask reached the chained tilt-shift:\n\(worker.outputText)")
        let submitStatus = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(submitStatus, 1, submit.outputText)
        XCTAssertTrue(submit.outputText.contains("1 cancelled"), submit.outputText)
        // The slot is free again: a new batch runs on the same worker.
        let urls = try server.serveSyntheticImages(1, prefix: "after")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 0, output)
    }

    /// `SHIFTWORK_CHAINED_TASKS=together`: each photo's two results come in one message; the outcome, the
    /// chaining and the coordinator's counts are those of the default, and nothing is stale.
    func testTheTwoResultsOfAPhotoInOneMessage() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        _ = try harness.launch(
            "together", ["worker", "--slots", "2", "--worker-id", "together", "--coordinator", endpoint],
            environment: ["SHIFTWORK_CHAINED_TASKS": "together"])
        var urls = try server.serveSyntheticImages(6, prefix: "together")
        server.serve(
            path: "/gone.jpg", response: .content(status: .notFound, contentType: "text/plain", body: Array("no".utf8)))
        urls.append(server.url("/gone.jpg"))
        let sink = harness.scratch.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--sink", sink.path, "--retries", "0", "--coordinator", endpoint])
        XCTAssertEqual(status, 1, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("7 items: 6 succeeded, 1 failed"), output)
        let out = harness.scratch.appendingPathComponent("out")
        let (outStatus, outOutput) = try await harness.run(
            ["submit"] + urls.dropLast() + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(outStatus, 0, outOutput)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 6)
        let page = try await metrics(metricsURL)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_chained_total", in: page), 12, page)
        XCTAssertEqual(
            MetricsPage.value("shiftwork_messages_dropped_total", in: page), 0, "no result was stale: \(page)")
    }

    /// With its result held back (`together`), the download is still the worker's while its tilt-shift
    /// filters: the heartbeats meanwhile list it, so the coordinator does not take its assignment for lost.
    func testHeartbeatsListTheDownloadWhoseResultIsHeldBack() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", "1", "--worker-id", "worker", "--log-level", "debug",
                "--coordinator", endpoint,
            ], environment: ["SHIFTWORK_CHAINED_TASKS": "together"])
        let side = 10000  // 100 megapixels: each filter runs for a second or more, one after the other (one slot)
        let image = try SyntheticImages.slowToFilterPNG(side: side)
        let urls = (0..<4).map { index -> String in
            server.serve(path: "/large-\(index).png", body: image, contentType: "image/png")
            return server.url("/large-\(index).png")
        }
        let out = harness.scratch.appendingPathComponent("out")
        // JPEG out: the PNG decode and the filter keep each chain seconds long; a 100-MP PNG encode would only
        // add seconds of test time.
        let (status, output) = try await harness.run(
            ["submit"] + urls + [
                "--out", out.path, "--format", "jpeg",
                "--coordinator", endpoint,
            ],
            timeout: .seconds(240))
        XCTAssertEqual(status, 0, output)
        let filtered = lines(of: worker, with: "result sent").filter { $0.contains("tilt-shift") }
        XCTAssertEqual(filtered.count, 4, worker.outputText)
        let page = try await metrics(metricsURL)
        // The four filters took seconds, with a heartbeat a second: none of them took a download for lost.
        XCTAssertEqual(
            MetricsPage.value("shiftwork_assignments_lost_total", in: page), 0, "\(page)\n\(harness.allOutput)")
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_chained_total", in: page), 4, page)
    }
}
