import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Durability over real processes: a coordinator with a data directory killed with `kill -9` in the
/// middle of a batch and started again loses nothing and runs nothing twice; a client re-attaches.
final class CoordinatorRestartTests: ClusterTestCase {
    /// Slow downloads (about a second each) keep a batch running for a while.
    private func serveSlowImages(_ count: Int, prefix: String) throws -> [String] {
        try server.serveSyntheticImages(count, prefix: prefix) { bytes, format in
            .slow(
                contentType: format.mediaType, body: bytes, chunkSize: max(1, bytes.count / 10),
                interval: .milliseconds(100), initialDelay: .zero)
        }
    }

    private func startCoordinator(_ name: String, endpoint: String, dataDirectory: URL) async throws -> ManagedProcess {
        let coordinator = try harness.launch(
            name,
            [
                "coordinator", "--listen", endpoint, "--insecure", "--data-dir", dataDirectory.path, "--worker-timeout",
                "2",
            ])
        guard await coordinator.waitForLine(where: { $0.contains("listening on") }) != nil else {
            throw HarnessError("\(name) did not start:\n\(coordinator.outputText)")
        }
        return coordinator
    }

    private func itemStates(_ endpoint: String, batch: String) async throws -> [Int: String] {
        let status = try await harness.status(endpoint, batch: batch)
        var states: [Int: String] = [:]
        for item in status.objects("batches").first?.objects("item_states") ?? [] {
            states[item.int("index")] = item["state"] as? String
        }
        return states
    }

    private func assertOneDecodableOutputPerItem(
        in directory: URL, count: Int, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(files.count, count, "exactly one output per item: \(files)", file: file, line: line)
        for name in files {
            let (image, _) = try ImageCodec.decode(
                [UInt8](try Data(contentsOf: directory.appendingPathComponent(name))))
            XCTAssertEqual(image.width, 120, name, file: file, line: line)
        }
    }

    func testKillingTheCoordinatorMidBatchLosesNothingAndRunsNothingTwice() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        try harness.startWorker("worker-a", endpoint: endpoint, slots: 2)
        try harness.startWorker("worker-b", endpoint: endpoint, slots: 2)
        let count = 12
        let urls = try serveSlowImages(count, prefix: "durable")
        let out = harness.scratch.appendingPathComponent("durable-out")
        let submit = try harness.launch("submit", ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = String(
            try XCTUnwrap(batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))

        // Kill the coordinator once some items are done and others are running.
        let midway = try await harness.waitForStatus(endpoint, batch: batchID, timeout: .seconds(60)) { status in
            (status.objects("batches").first?.int("succeeded") ?? 0) >= 3
        }
        XCTAssertGreaterThanOrEqual(midway.objects("batches").first?.int("succeeded") ?? 0, 3, harness.allOutput)
        await first.kill9()
        // What had finished at the kill: the journal has it; nothing of it may run again.
        let requestsAtKill = (0..<count).map {
            server.requestCount(path: TestHTTPServer.syntheticImagePath($0, prefix: "durable"))
        }
        let finishedAtKill = (midway.objects("batches").first?.objects("item_states") ?? [])
            .filter { ($0["state"] as? String) == "succeeded" }.map { $0.int("index") }

        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)
        let status = await submit.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(status, 0, "the client rides through the restart:\n\(harness.allOutput)")
        XCTAssertTrue(submit.outputText.contains("\(count) items: \(count) succeeded, 0 failed"), submit.outputText)
        try assertOneDecodableOutputPerItem(in: out, count: count)

        for index in finishedAtKill {
            let path = TestHTTPServer.syntheticImagePath(index, prefix: "durable")
            XCTAssertEqual(
                server.requestCount(path: path), requestsAtKill[index],
                "item \(index) had finished before the kill and must not run again")
        }
        let states = try await itemStates(endpoint, batch: batchID)
        XCTAssertEqual(states.count, count)
        XCTAssertTrue(states.values.allSatisfy { $0 == "succeeded" }, "\(states)")
    }

    func testAGracefullyStoppedCoordinatorCarriesOnWhereItStopped() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let count = 6
        let urls = try serveSlowImages(count, prefix: "stopped")
        let out = harness.scratch.appendingPathComponent("stopped-out")
        let submit = try harness.launch("submit", ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = String(
            try XCTUnwrap(batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))
        _ = try await harness.waitForStatus(endpoint, batch: batchID, timeout: .seconds(60)) { status in
            (status.objects("batches").first?.int("succeeded") ?? 0) >= 2
        }
        // SIGTERM, as `docker compose restart` does: the running items are not cancelled for good.
        let stopped = await first.stop()
        XCTAssertEqual(stopped, 0, first.outputText)
        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)
        let status = await submit.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(submit.outputText.contains("\(count) items: \(count) succeeded, 0 failed"), submit.outputText)
        try assertOneDecodableOutputPerItem(in: out, count: count)
    }

    func testABatchGrownByAManifestSurvivesACoordinatorRestart() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let urls = try serveSlowImages(6, prefix: "listed")
        server.serve(path: "/listed/all.txt", body: Array(urls.joined(separator: "\n").utf8), contentType: "text/plain")
        let out = harness.scratch.appendingPathComponent("listed-out")
        let submit = try harness.launch(
            "submit",
            [
                "submit", server.url("/listed/all.txt"), "--out", out.path,
                "--coordinator", endpoint,
            ])
        let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = String(
            try XCTUnwrap(batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))
        // Kill once the manifest has expanded and some of its images are done.
        _ = try await harness.waitForStatus(endpoint, batch: batchID, timeout: .seconds(60)) { status in
            (status.objects("batches").first?.int("succeeded") ?? 0) >= 3
        }
        await first.kill9()
        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)

        let status = await submit.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(submit.outputText.contains("7 items: 7 succeeded, 0 failed"), submit.outputText)
        try assertOneDecodableOutputPerItem(in: out, count: 6)
        XCTAssertEqual(
            server.requestCount(path: "/listed/all.txt"), 1,
            "the expansion was journaled: the manifest is not fetched again")
    }

    func testResultsReattachesToABatchFromAnotherProcessAndAfterARestart() async throws {
        let endpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let data = harness.scratch.appendingPathComponent("data")
        let first = try await startCoordinator("coordinator-1", endpoint: endpoint, dataDirectory: data)
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let count = 6
        let urls = try serveSlowImages(count, prefix: "reattach")
        let submit = try harness.launch(
            "submit",
            ["submit"] + urls + [
                "--out", harness.scratch.appendingPathComponent("lost").path,
                "--coordinator", endpoint,
            ])
        let batchLine = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batchID = String(
            try XCTUnwrap(batchLine?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(submit.outputText)"))
        _ = try await harness.waitForStatus(endpoint, batch: batchID, timeout: .seconds(60)) { status in
            (status.objects("batches").first?.int("succeeded") ?? 0) >= 2
        }
        await submit.kill9()  // the user's terminal went away
        await first.kill9()  // and so did the coordinator
        _ = try await startCoordinator("coordinator-2", endpoint: endpoint, dataDirectory: data)

        let out = harness.scratch.appendingPathComponent("fetched")
        let (status, output) = try await harness.run(
            ["results", batchID, "--out", out.path, "--coordinator", endpoint], timeout: .seconds(90))
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("\(count) items: \(count) succeeded, 0 failed"), output)
        try assertOneDecodableOutputPerItem(in: out, count: count)

        // A finished batch can be fetched again, as often as wanted.
        let again = harness.scratch.appendingPathComponent("fetched-again")
        let (secondStatus, secondOutput) = try await harness.run([
            "results", batchID, "--out", again.path, "--json",
            "--coordinator", endpoint,
        ])
        XCTAssertEqual(secondStatus, 0, secondOutput)
        try assertOneDecodableOutputPerItem(in: again, count: count)
    }

    func testABadDataDirectoryOrMessageLimitStopsTheCoordinatorWithAClearError() async throws {
        let file = harness.scratch.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let (status, output) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0", "--insecure", "--data-dir", file.path],
            timeout: .seconds(30))
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(
            output.contains("cannot create the data directory \(file.path)") && output.contains("--data-dir"), output)

        let data = harness.scratch.appendingPathComponent("locked")
        let first = try await startCoordinator(
            "first", endpoint: "tcp://127.0.0.1:\(try freeLoopbackPort())", dataDirectory: data)
        let (secondStatus, secondOutput) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0", "--insecure", "--data-dir", data.path],
            timeout: .seconds(30))
        XCTAssertNotEqual(secondStatus, 0, secondOutput)
        XCTAssertTrue(secondOutput.contains("another coordinator is using the data directory"), secondOutput)
        XCTAssertTrue(first.isRunning)

        let (limitStatus, limitOutput) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0", "--insecure", "--max-message-mb", "0"],
            timeout: .seconds(30))
        XCTAssertNotEqual(limitStatus, 0, limitOutput)
        XCTAssertTrue(limitOutput.contains("--max-message-mb must be at least 1"), limitOutput)
    }

    func testResultsSaysWhatToDoWhenTheCoordinatorKeepsNoResults() async throws {
        let endpoint = try await harness.startCoordinator()
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let urls = try server.serveSyntheticImages(1, prefix: "kept")
        let submit = try await harness.run(
            ["submit"] + urls + [
                "--out", harness.scratch.appendingPathComponent("a").path,
                "--coordinator", endpoint,
            ])
        XCTAssertEqual(submit.status, 0, submit.output)
        let batchID = try XCTUnwrap(
            submit.output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?
                .split(separator: " ")[1].dropLast())
        let (status, output) = try await harness.run([
            "results", String(batchID), "--out", harness.scratch.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("start it with --data-dir"), output)
        let (unknownStatus, unknownOutput) = try await harness.run(["results", "b-nothing", "--coordinator", endpoint])
        XCTAssertEqual(unknownStatus, 1, unknownOutput)
        XCTAssertTrue(unknownOutput.contains("no batch b-nothing"), unknownOutput)
    }
}
