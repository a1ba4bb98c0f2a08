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
        let busy = try harness.launch("busy", ["worker", "--slots", "2", "--compute-threads", "1", "--worker-id", "busy",
                                               "--log-level", "debug", "--coordinator", endpoint])
        // Two photos large enough that the first filters for seconds while the second, downloaded, waits.
        let bytes = try SyntheticImages.make(width: 6000, height: 4000, format: .jpeg, seed: 5)
        let urls = (0..<2).map { index -> String in
            server.serve(path: "/tail-\(index).jpg", body: bytes, contentType: "image/jpeg")
            return server.url("/tail-\(index).jpg")
        }
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch("submit", ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        // Both chained tilt-shifts are on `busy`: one filtering, one waiting for the compute thread.
        var waiting = false
        for _ in 0..<600 where !waiting {
            waiting = lines(of: busy, with: "chained tilt-shift taken up after its download").count == 2
                && lines(of: busy, with: "task started").contains { $0.contains("tilt-shift") }
            if !waiting { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertTrue(waiting, busy.outputText)
        // A second worker joins idle, with nothing left to assign: the waiting photo is asked back.
        let idle = try harness.launch("idle", ["worker", "--slots", "2", "--compute-threads", "1", "--worker-id", "idle",
                                               "--log-level", "debug", "--coordinator", endpoint])
        let status = await submit.waitForExit(timeout: .seconds(240))
        XCTAssertEqual(status, 0, "\(submit.outputText)\n\(harness.allOutput)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 2, "the batch is whole")

        let page = try await TestHTTPClient.get(metricsURL).text
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_given_back_total", in: page), 1, page)
        XCTAssertGreaterThanOrEqual(MetricsPage.value("shiftwork_tasks_asked_back_total", in: page) ?? 0, 1, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_tasks_input_lost_total", in: page), 0, "giving back is not a loss: \(page)")
        XCTAssertEqual(lines(of: busy, with: "task given back to the coordinator before it started").count, 1, busy.outputText)
        // Exactly once: each photo's tilt-shift succeeded on one worker only, one on each.
        let filteredBusy = lines(of: busy, with: "task succeeded").filter { $0.contains("tilt-shift") }
        let filteredIdle = lines(of: idle, with: "task succeeded").filter { $0.contains("tilt-shift") }
        XCTAssertEqual(filteredBusy.count, 1, busy.outputText)
        XCTAssertEqual(filteredIdle.count, 1, idle.outputText)
        XCTAssertEqual(lines(of: idle, with: "task received").count, 1, "the given-back photo's download ran again there:\n\(idle.outputText)")
    }

    /// A give-back setting the worker does not know is refused at start, naming the value and the choices.
    func testAnUnknownGiveBackSettingIsRefusedSayingTheChoices() async throws {
        let (status, output) = try await harness.run(["worker", "--coordinator", "tcp://127.0.0.1:1"],
                                                     environment: ["SHIFTWORK_GIVE_BACK": "maybe"])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("SHIFTWORK_GIVE_BACK=maybe") && output.contains("on, off"), output)
    }
}
