import Foundation
import ShiftworkTestSupport
import XCTest

/// Attempts lost with their workers, over real processes: a worker killed (`kill -9`) while it runs a task
/// costs the task an attempt of its batch's `--retries`; a task whose workers keep dying fails with that
/// cause; the attempts, and a batch's deadline, survive a restart of a coordinator with `--data-dir`.
/// Downloads from the test's HTTP origin stall, so a task runs until its worker is killed.
final class WorkerLostProcessTests: ClusterTestCase {
    private func startCoordinator(
        _ name: String, endpoint: String, dataDirectory: URL? = nil
    ) async throws -> ManagedProcess {
        let coordinator = try harness.launch(
            name,
            [
                "coordinator", "--listen", endpoint, "--insecure", "--worker-timeout", "2",
            ] + (dataDirectory.map { ["--data-dir", $0.path] } ?? []))
        guard await coordinator.waitForLine(where: { $0.contains("listening on") }) != nil else {
            throw HarnessError("\(name) did not start:\n\(coordinator.outputText)")
        }
        return coordinator
    }

    /// Launches `submit` of `url` with `extra` options; returns it and its batch ID.
    private func submit(_ url: String, _ endpoint: String, _ extra: [String]) async throws -> (ManagedProcess, String) {
        let out = harness.scratch.appendingPathComponent("out-\(UUID().uuidString)")
        let submit = try harness.launch(
            "submit", ["submit", url, "--out", out.path, "--coordinator", endpoint] + extra)
        let line = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = String(
            try XCTUnwrap(line?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))
        return (submit, batchID)
    }

    /// The batch's only item, once `condition` holds for it (or the wait ran out).
    private func onlyItem(
        _ endpoint: String, _ batchID: String, timeout: Duration = .seconds(60),
        until condition: @escaping ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let status = try await harness.waitForStatus(endpoint, batch: batchID, timeout: timeout) { status in
            (status.objects("batches").first?.objects("item_states").first).map(condition) ?? false
        }
        return status.objects("batches").first?.objects("item_states").first ?? [:]
    }

    private func isRunning(after losses: Int) -> ([String: Any]) -> Bool {
        { $0["state"] as? String == "running" && $0.objects("failed_attempts").count == losses }
    }

    func testATaskWhoseWorkersKeepDyingFailsWithTheWorkerLostCauseAndItsAttemptsListed() async throws {
        server.serve(path: "/stall.jpg", response: .stall)
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        _ = try await startCoordinator("coordinator", endpoint: endpoint)
        let first = try harness.startWorker("w-1", endpoint: endpoint, slots: 1)
        let (submit, batchID) = try await submit(server.url("/stall.jpg"), endpoint, ["--retries", "1"])

        var item = try await onlyItem(endpoint, batchID, until: isRunning(after: 0))
        XCTAssertEqual(item["state"] as? String, "running", harness.allOutput)
        await first.kill9()
        let second = try harness.startWorker("w-2", endpoint: endpoint, slots: 1)
        item = try await onlyItem(endpoint, batchID, until: isRunning(after: 1))
        XCTAssertEqual(item["state"] as? String, "running", "retried on w-2 after w-1 was lost:\n\(harness.allOutput)")
        await second.kill9()

        let exit = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 1, "the item failed:\n\(harness.allOutput)")
        item = try await onlyItem(endpoint, batchID) { $0["state"] as? String == "failed" }
        XCTAssertEqual(item["state"] as? String, "failed", "\(item)")
        let error = item["error"] as? String ?? ""
        XCTAssertTrue(error.contains("worker lost 2 times") && error.contains("w-2"), error)
        XCTAssertEqual(item.int("attempts"), 2, "\(item)")
        let attempts = item.objects("failed_attempts")
        XCTAssertEqual(attempts.map { $0["code"] as? String }, ["worker-lost", "worker-lost"], "\(attempts)")
        XCTAssertEqual(attempts.map { $0["worker"] as? String }, ["w-1", "w-2"])
        XCTAssertEqual(attempts.map { $0["transient"] as? Bool }, [true, true])
        XCTAssertEqual(attempts.map { $0["retried"] as? Bool }, [true, false], "--retries 1: the second loss is final")
        XCTAssertTrue(attempts.allSatisfy { $0.int("failed_at_unix_ms") > 1_700_000_000_000 }, "\(attempts)")
        XCTAssertTrue(submit.outputText.contains("worker lost 2 times"), submit.outputText)

        let table = try await harness.run(["status", batchID, "--coordinator", endpoint])
        XCTAssertTrue(table.output.contains("download attempt 1 on w-1 at "), table.output)
        XCTAssertTrue(table.output.contains("worker-lost (transient)"), table.output)
    }

    func testAttemptsAndTheDeadlineSurviveACoordinatorRestart() async throws {
        server.serve(path: "/stall.jpg", response: .stall)
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        let worker = try harness.startWorker("w-1", endpoint: endpoint, slots: 1)
        // Long enough to reach the kill before it (3 s at load 8, 2026-11-28; checked below), as short as that
        // allows: the test waits it out.
        let deadline = 12
        let submitted = ContinuousClock.now
        let (submit, batchID) = try await submit(
            server.url("/stall.jpg"), endpoint, ["--retries", "5", "--deadline", "\(deadline)"])
        _ = try await onlyItem(endpoint, batchID, until: isRunning(after: 0))
        await worker.kill9()
        let lost = try await onlyItem(endpoint, batchID) { $0.objects("failed_attempts").count == 1 }
        XCTAssertEqual(lost.objects("failed_attempts").first?["code"] as? String, "worker-lost", harness.allOutput)
        XCTAssertNotEqual(
            lost["state"] as? String, "cancelled",
            "the deadline passed before the coordinator was killed, so its restart shows nothing:\n\(harness.allOutput)"
        )
        await first.kill9()

        // Down until the batch's deadline has passed: counted from the submit, it is due as soon as the
        // coordinator is back; counted from the restart, it would be `deadline` seconds away.
        let down = submitted + .seconds(deadline + 1)
        if ContinuousClock.now < down { try await Task.sleep(until: down) }
        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)
        let restored = try await onlyItem(endpoint, batchID, timeout: .seconds(deadline / 2)) {
            $0["state"] as? String == "cancelled"
        }
        XCTAssertEqual(
            restored["state"] as? String, "cancelled",
            "the deadline kept counting from the submit:\n\(harness.allOutput)")
        XCTAssertTrue((restored["error"] as? String ?? "").contains("deadline of \(deadline) s passed"), "\(restored)")
        let attempts = restored.objects("failed_attempts")
        XCTAssertEqual(
            attempts.map { $0["code"] as? String }, ["worker-lost"], "the attempt before the restart is still listed")
        XCTAssertEqual(attempts.first?["worker"] as? String, "w-1")
        XCTAssertEqual(
            attempts.first.map { $0.int("failed_at_unix_ms") },
            lost.objects("failed_attempts").first.map { $0.int("failed_at_unix_ms") })
        _ = await submit.waitForExit(timeout: .seconds(60))
    }
}
