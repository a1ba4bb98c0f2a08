import Foundation
import ShiftworkTestSupport
import XCTest

/// How a worker process ends under its `ServiceGroup`: SIGTERM drains it (see
/// `ClusterSemanticsTests.testSIGTERMDrainsAWorkerItFinishesWhatItRunsAndTakesNothingNew`); a drain that
/// outlives --drain-timeout, or a second signal, cuts it short. Its task here never finishes: its
/// download stalls.
final class WorkerShutdownTests: ClusterTestCase {
    /// A worker holding one task whose download never answers.
    private func workerHoldingAStalledTask(drainTimeout: Int) async throws -> ManagedProcess {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "stuck",
            [
                "worker", "--slots", "1", "--worker-id", "stuck", "--coordinator", endpoint,
                "--drain-timeout", String(drainTimeout),
            ])
        server.serve(path: "/stalled.jpg", response: .stall)
        _ = try harness.launch(
            "submit", ["submit", server.url("/stalled.jpg"), "--out", harness.scratch.path, "--coordinator", endpoint])
        _ = try await harness.waitForStatus(endpoint) { $0.int("running_tasks") == 1 }
        return worker
    }

    func testADrainThatOutlivesTheDrainTimeoutIsCutShortAndTheWorkerLeaves() async throws {
        let worker = try await workerHoldingAStalledTask(drainTimeout: 1)
        kill(worker.pid, SIGTERM)
        let exit = await worker.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, "the worker leaves cleanly at its drain timeout:\n\(worker.outputText)")
        XCTAssertTrue(worker.outputText.contains("finished=0"), worker.outputText)
        XCTAssertTrue(worker.outputText.contains("abandoned=1"), "the stalled task is abandoned:\n\(worker.outputText)")
    }

    func testASecondSignalStopsADrainingWorkerAtOnce() async throws {
        // A drain timeout no test waits for: only the second signal can end the drain.
        let worker = try await workerHoldingAStalledTask(drainTimeout: 3600)
        kill(worker.pid, SIGTERM)
        let draining = await worker.waitForLine { $0.contains("draining") }
        XCTAssertNotNil(draining, worker.outputText)
        kill(worker.pid, SIGINT)
        let exit = await worker.waitForExit(timeout: .seconds(60))
        XCTAssertNotNil(exit, "a second signal must end the drain:\n\(worker.outputText)")
        XCTAssertTrue(worker.outputText.contains("second signal"), worker.outputText)
        XCTAssertTrue(worker.outputText.contains("abandoned=1"), "the stalled task is abandoned:\n\(worker.outputText)")
    }
}
