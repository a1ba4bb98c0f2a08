import Cluster
import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A worker whose every slot filters images as large as it accepts, on a machine where another process
/// hogs a core, stays alive and cancellable: image work runs on threads the worker owns, so Swift's
/// cooperative pool stays free for its actor, heartbeats and socket bridge.
final class BusyWorkerTests: ClusterTestCase {
    /// The images' side: 12000 × 12000 is 144 megapixels, the worker's `--max-megapixels` below (the
    /// default limit is 150).
    private let side = 12000

    func testAWorkerFilteringImagesAtItsPixelLimitStaysAliveAndConfirmsACancel() async throws {
        let slots = ProcessInfo.processInfo.activeProcessorCount
        let image = try SyntheticImages.slowToFilterPNG(side: side)
        let urls = (0..<(6 * slots)).map { index -> String in
            server.serve(path: "/large/image-\(index).png", body: image, contentType: "image/png")
            return server.url("/large/image-\(index).png")
        }
        // Another CPU-bound process, as on a busy machine.
        let hog = try harness.launch(
            "cpu-hog", executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "while :; do :; done"])
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", String(slots), "--worker-id", "busy", "--coordinator", endpoint,
                "--max-megapixels", String(side * side / 1_000_000), "--log-level", "debug",
            ])
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch("submit", ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])

        // Every slot filters a large image.
        let filtering = await waitUntil(timeout: .seconds(60)) { Self.tiltShiftsRunning(worker.outputText) == slots }
        XCTAssertTrue(filtering, "the worker never filtered \(slots) images at once:\n\(harness.allOutput)")

        // Heartbeats keep arriving while it does: the coordinator hears from the worker again and again (its
        // `last_seen_ms_ago` falls back) while the slots filter, and never declares it dead. Watched through
        // status requests from this process (a `shiftwork status` process per look would take hundreds of
        // milliseconds here). The longest silence is printed for the benchmarks, not asserted: a limit on the
        // wall clock beside a CPU hog and the TSan step proves nothing (docs/benchmarks.md has the figure).
        try await harness.withClient(endpoint) { client in
            var heard = 0
            var previous: UInt64?
            var latest: UInt64 = 0
            let watchUntil = ContinuousClock.now + .seconds(60)
            while heard < 3, ContinuousClock.now < watchUntil {
                let status = try await client.status()
                let record = try XCTUnwrap(
                    status.workers.first { $0.workerID == "busy" },
                    "the busy worker vanished from status:\n\(harness.allOutput)")
                if let previous, record.lastSeenMsAgo < previous { heard += 1 }
                previous = record.lastSeenMsAgo
                latest = max(latest, record.lastSeenMsAgo)
                try await Task.sleep(for: .milliseconds(150))
            }
            print("a busy worker last seen at most \(latest) ms ago")  // the figure docs/benchmarks.md records
            XCTAssertGreaterThanOrEqual(
                heard, 3, "the coordinator stopped hearing from the busy worker:\n\(harness.allOutput)")
            XCTAssertFalse(harness.allOutput.contains("declared dead"), harness.allOutput)
            XCTAssertTrue(hog.isRunning, "the CPU hog must run throughout")

            // A cancel while every slot filters is confirmed: every slot frees, the filters stopped by the cancel.
            let busy = await waitUntil(timeout: .seconds(60)) { Self.tiltShiftsRunning(worker.outputText) == slots }
            XCTAssertTrue(busy, "not every slot was filtering when the cancel was due:\n\(harness.allOutput)")
            let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
            let batchID = try XCTUnwrap(
                batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)")
            // Cancelled and timed from this process, from the request to the status that shows every slot free:
            // the second is the coordinator's and the worker's, not that of CLI processes starting.
            let cancelled = ContinuousClock.now
            let accepted = try await client.cancel(batchID: String(batchID))
            XCTAssertGreaterThan(
                accepted.cancelledItems, 0, "the cancel found no unfinished item:\n\(harness.allOutput)")
            let idle = try await harness.waitForStatus(client, timeout: .seconds(60)) { $0.runningTasks == 0 }
            let elapsed = ContinuousClock.now - cancelled
            print("every slot free \(elapsed) after the cancel")  // the figure docs/benchmarks.md records
            XCTAssertEqual(idle.runningTasks, 0, "slots still busy after the cancel:\n\(harness.allOutput)")
            XCTAssertTrue(worker.outputText.contains("task cancelled, result sent"), worker.outputText)
            let submitStatus = await submit.waitForExit(timeout: .seconds(60))
            XCTAssertEqual(submitStatus, 1, "a cancelled batch is not a success:\n\(submit.outputText)")
            XCTAssertTrue(
                submit.outputText.contains(" cancelled"),
                "the summary counts the cancelled items:\n\(submit.outputText)")
        }
    }

    /// Tilt-shifts the worker has started and not yet answered, from its debug log.
    private static func tiltShiftsRunning(_ log: String) -> Int {
        let lines = log.split(separator: "\n").filter { $0.contains("kind=tilt-shift") }
        let started = lines.filter { $0.contains("task started") }.count
        let answered = lines.filter { $0.contains("result sent") }.count
        return started - answered
    }

    private func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
