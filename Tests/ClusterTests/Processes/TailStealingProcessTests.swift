import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Work stealing at a batch's tail over real processes: a photo waiting behind a worker's busy compute
/// thread is given back when another worker stands idle, runs there exactly once, and the batch is whole.
final class TailStealingProcessTests: ClusterTestCase {
    private func lines(of process: ManagedProcess, with text: String) -> [Substring] {
        process.outputText.split(separator: "\n").filter { $0.contains(text) }
    }

    func testAPhotoWaitingBehindABusyComputeThreadRunsOnceOnTheWorkerThatJoinsIdle() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        // Five slots for one compute thread: one photo filters, four wait, so that the idle worker's start (a
        // second or more on a loaded machine) has four filters' time to come before the last photo starts.
        let busy = try harness.launch(
            "busy",
            [
                "worker", "--slots", "5", "--compute-threads", "1", "--worker-id", "busy",
                "--log-level", "debug", "--coordinator", endpoint,
            ])
        // Photos large enough that each filters for a second or so (a 64-megapixel PNG: its decode and filter).
        let side = 8000
        let bytes = try SyntheticImages.slowToFilterPNG(side: side)
        let urls = (0..<5).map { index -> String in
            server.serve(path: "/tail-\(index).png", body: bytes, contentType: "image/png")
            return server.url("/tail-\(index).png")
        }
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit"] + urls + ["--out", out.path, "--format", "jpeg", "--coordinator", endpoint])
        // The five chained tilt-shifts are on `busy`: one filtering, four waiting for the compute thread.
        var waiting = false
        for _ in 0..<600 where !waiting {
            waiting =
                lines(of: busy, with: "chained tilt-shift taken up after its download").count == 5
                && lines(of: busy, with: "task started").contains { $0.contains("tilt-shift") }
            if !waiting { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertTrue(waiting, busy.outputText)
        // A second worker joins idle, with nothing left to assign: the waiting photo is asked back.
        let idle = try harness.launch(
            "idle",
            [
                "worker", "--slots", "2", "--compute-threads", "1", "--worker-id", "idle",
                "--log-level", "debug", "--coordinator", endpoint,
            ])
        let status = await submit.waitForExit(timeout: .seconds(240))
        XCTAssertEqual(status, 0, "\(submit.outputText)\n\(harness.allOutput)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 5, "the batch is whole")

        let page = try await TestHTTPClient.get(metricsURL).text
        let givenBack = MetricsPage.value("shiftwork_tasks_given_back_total", in: page) ?? 0
        XCTAssertGreaterThanOrEqual(givenBack, 1, "a waiting photo was given back:\n\(page)\n\(harness.allOutput)")
        XCTAssertEqual(
            MetricsPage.value("shiftwork_tasks_input_lost_total", in: page), 0, "giving back is not a loss: \(page)")
        XCTAssertEqual(
            lines(of: busy, with: "task given back to the coordinator before it started").count, givenBack,
            busy.outputText)
        // Exactly once: each photo's tilt-shift succeeded on one worker only; the given-back ones on `idle`,
        // after their downloads ran again there.
        let filteredBusy = lines(of: busy, with: "task succeeded").filter { $0.contains("tilt-shift") }
        let filteredIdle = lines(of: idle, with: "task succeeded").filter { $0.contains("tilt-shift") }
        XCTAssertEqual(filteredBusy.count + filteredIdle.count, 5, "\(busy.outputText)\n\(idle.outputText)")
        XCTAssertEqual(filteredIdle.count, givenBack, idle.outputText)
        XCTAssertEqual(
            lines(of: idle, with: "task received").count, givenBack,
            "the given-back photos' downloads ran again there:\n\(idle.outputText)")
    }

    /// A give-back setting the worker does not know is refused at start, naming the value and the choices.
    func testAnUnknownGiveBackSettingIsRefusedSayingTheChoices() async throws {
        let (status, output) = try await harness.run(
            ["worker", "--coordinator", "tcp://127.0.0.1:1"],
            environment: ["SHIFTWORK_GIVE_BACK": "maybe"])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("SHIFTWORK_GIVE_BACK=maybe") && output.contains("on, off"), output)
    }
}
