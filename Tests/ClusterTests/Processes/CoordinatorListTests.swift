import Cluster
import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// Workers and clients given a list of coordinators (`--coordinator A,B`, docs/failover.md) turn to the
/// next one when they have had no live connection to theirs for their silence timeout (the socket monitor
/// and ZMTP heartbeats, no request), or when theirs refuses them as passive: real processes on loopback, a
/// dead endpoint being a port nothing listens on or a coordinator killed with SIGKILL, a passive one a real
/// ROUTER socket that refuses everything (`PassiveCoordinator`).
final class CoordinatorListTests: ClusterTestCase {
    /// An endpoint on loopback where nothing listens.
    private func deadEndpoint() throws -> String {
        "tcp://127.0.0.1:\(try freeLoopbackPort())"
    }

    /// Submits `count` fresh images to `endpoint` and returns the exit status and output.
    private func submitBatch(
        _ prefix: String, to endpoint: String, count: Int = 2
    ) async throws -> (status: Int32?, output: String) {
        let urls = try server.serveSyntheticImages(count, prefix: prefix) { _, _ in nil }
        let out = harness.scratch.appendingPathComponent(prefix)
        return try await harness.run(["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
    }

    func testAWorkerGivenADeadCoordinatorFirstRegistersWithTheLiveOneAndRunsABatch() async throws {
        let dead = try deadEndpoint()
        let live = try await harness.startCoordinator()
        let worker = try harness.startWorker("turner", endpoint: "\(dead),\(live)", slots: 2)
        let registered = try await harness.waitForStatus(live) { $0.objects("workers").count == 1 }
        XCTAssertEqual(registered.objects("workers").compactMap { $0["id"] as? String }, ["turner"], harness.allOutput)
        XCTAssertTrue(worker.outputText.contains("turning to the next coordinator"), worker.outputText)

        let (status, output) = try await submitBatch("after-turn", to: live)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("2 items: 2 succeeded, 0 failed"), output)
    }

    func testAClientGivenADeadCoordinatorFirstGetsStatusFromTheLiveOne() async throws {
        let dead = try deadEndpoint()
        let live = try await harness.startCoordinator()
        let (status, output) = try await harness.run(["status", "--json", "--coordinator", "\(dead),\(live)"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("turning from the coordinator at \(dead) to \(live)"), output)
        XCTAssertTrue(output.contains("no live connection"), output)
        XCTAssertTrue(output.contains("\"workers\""), output)
    }

    func testTheSameListInTheEnvironmentWorksAsTheOption() async throws {
        let dead = try deadEndpoint()
        let live = try await harness.startCoordinator()
        let (status, output) = try await harness.run(
            ["status", "--json"], environment: ["SHIFTWORK_COORDINATOR": "\(dead), \(live)"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("to \(live)"), output)
    }

    func testABadEntryInTheListIsNamedAndNothingIsTried() async throws {
        let (status, output) = try await harness.run(["status", "--coordinator", "tcp://127.0.0.1:1,coordinator:5570"])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("--coordinator: 'coordinator:5570' is not a coordinator endpoint"), output)
        let (workerStatus, workerOutput) = try await harness.run(
            ["worker"], environment: ["SHIFTWORK_COORDINATOR": "tcp://127.0.0.1:1,,tcp://127.0.0.1:2"])
        XCTAssertNotEqual(workerStatus, 0, workerOutput)
        XCTAssertTrue(workerOutput.contains("SHIFTWORK_COORDINATOR: the coordinator list"), workerOutput)
        XCTAssertTrue(workerOutput.contains("empty entry (number 2)"), workerOutput)
    }

    func testAWorkerWhoseCoordinatorIsKilledMidBatchTurnsToTheSecondAndRunsANewBatch() async throws {
        let firstPort = try freeLoopbackPort()
        let secondPort = try freeLoopbackPort()
        let first = "tcp://127.0.0.1:\(firstPort)"
        let second = "tcp://127.0.0.1:\(secondPort)"
        let firstData = harness.scratch.appendingPathComponent("data-1")
        let secondData = harness.scratch.appendingPathComponent("data-2")
        let coordinator1 = try harness.launch(
            "coordinator-1",
            [
                "coordinator", "--listen", first, "--insecure",
                "--data-dir", firstData.path,
            ])
        let listening = await coordinator1.waitForLine { $0.contains("listening on") }
        XCTAssertNotNil(listening, coordinator1.outputText)
        let worker = try harness.startWorker("survivor", endpoint: "\(first),\(second)", slots: 2)
        _ = try await harness.waitForStatus(first) { $0.objects("workers").count == 1 }

        let stalled = try server.serveSyntheticImages(2, prefix: "stalled") { _, _ in .stall }
        let out = harness.scratch.appendingPathComponent("stalled")
        let submit = try harness.launch("submit", ["submit"] + stalled + ["--out", out.path, "--coordinator", first])
        _ = try await harness.waitForStatus(first) { $0.int("running_tasks") >= 1 }
        await coordinator1.kill9()

        // A second coordinator, empty: the batch is not there (carrying it over is the pair's job).
        let coordinator2 = try harness.launch(
            "coordinator-2",
            [
                "coordinator", "--listen", second, "--insecure",
                "--data-dir", secondData.path,
            ])
        let listening2 = await coordinator2.waitForLine { $0.contains("listening on") }
        XCTAssertNotNil(listening2, coordinator2.outputText)
        let registered = try await harness.waitForStatus(second) { $0.objects("workers").count == 1 }
        XCTAssertEqual(
            registered.objects("workers").compactMap { $0["id"] as? String }, ["survivor"], harness.allOutput)
        XCTAssertTrue(worker.outputText.contains("turning to the next coordinator"), worker.outputText)

        let (status, output) = try await submitBatch("on-the-second", to: second)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("2 items: 2 succeeded, 0 failed"), output)
        _ = await submit.stop()
    }

    func testAWorkerAndAClientRefusedAsPassiveTurnToTheLiveCoordinatorAtOnce() async throws {
        try await PassiveCoordinator.with { passive in
            let live = try await harness.startCoordinator()
            let pair = "\(passive.endpoint),\(live)"
            let worker = try harness.startWorker("follower", endpoint: pair, slots: 2)
            let registered = try await harness.waitForStatus(live) { $0.objects("workers").count == 1 }
            XCTAssertEqual(
                registered.objects("workers").compactMap { $0["id"] as? String }, ["follower"], harness.allOutput)
            XCTAssertTrue(worker.outputText.contains("turning to the next coordinator"), worker.outputText)
            XCTAssertTrue(worker.outputText.contains("passive one of its pair"), worker.outputText)

            let (status, output) = try await submitBatch("past-the-passive", to: pair)
            XCTAssertEqual(status, 0, output)
            XCTAssertTrue(output.contains("2 items: 2 succeeded, 0 failed"), output)
            XCTAssertTrue(output.contains("turning from the coordinator at \(passive.endpoint) to \(live)"), output)

            let (statusStatus, statusOutput) = try await harness.run(["status", "--json", "--coordinator", pair])
            XCTAssertEqual(statusStatus, 0, statusOutput)
            XCTAssertTrue(statusOutput.contains("\"follower\""), statusOutput)
            XCTAssertGreaterThanOrEqual(passive.refusals, 3, "the worker's hello, the submission and the status")
        }
    }

    func testAClientFollowingABatchWhoseCoordinatorIsKilledReattachesOnTheNextWithoutWritingAnOutputTwice()
        async throws
    {
        let first = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let second = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        let pair = "\(first),\(second)"
        // The second coordinator takes the first's data directory: it recovers the batch from the journal,
        // as the other coordinator of a pair holds it.
        let data = harness.scratch.appendingPathComponent("data")
        let coordinator1 = try harness.launch(
            "coordinator-1", ["coordinator", "--listen", first, "--insecure", "--data-dir", data.path])
        let listening = await coordinator1.waitForLine { $0.contains("listening on") }
        XCTAssertNotNil(listening, coordinator1.outputText)
        try harness.startWorker("survivor", endpoint: pair, slots: 4)
        _ = try await harness.waitForStatus(first) { $0.objects("workers").count == 1 }

        // Two images at once; two that stall on their first download and come on the next.
        let quick = try server.serveSyntheticImages(2, prefix: "quick")
        let late = try server.serveSyntheticImages(2, prefix: "late") { bytes, format in
            .sequence([.stall], then: .content(status: .ok, contentType: format.mediaType, body: bytes))
        }
        let out = harness.scratch.appendingPathComponent("followed")
        let submit = try harness.launch(
            "submit", ["submit"] + quick + late + ["--out", out.path, "--coordinator", pair])
        let written = { () -> [String] in
            ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).filter { !$0.hasPrefix(".") }
        }
        // Polls the coordinator (its status) until the quick two are written by the client.
        _ = try await harness.waitForStatus(first) { _ in written().count == 2 }
        await coordinator1.kill9()
        let coordinator2 = try harness.launch(
            "coordinator-2", ["coordinator", "--listen", second, "--insecure", "--data-dir", data.path])
        let listening2 = await coordinator2.waitForLine { $0.contains("listening on") }
        XCTAssertNotNil(listening2, coordinator2.outputText)

        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(submit.outputText.contains("4 items: 4 succeeded, 0 failed"), submit.outputText)
        XCTAssertTrue(
            submit.outputText.contains("turning from the coordinator at \(first) to \(second)"), submit.outputText)
        // An output written again would have taken a free name beside the first (nothing is overwritten).
        XCTAssertEqual(written().count, 4, "each output once, none under a second name: \(written())")
    }

    func testAnIdleWorkerWithTwoCoordinatorsSendsItsOwnNothingButHeartbeats() async throws {
        // The coordinator is played on a real ROUTER socket, which sees every message the worker sends.
        let context = try MessagingContext()
        let coordinator = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        do {
            let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
            let worker = try harness.startWorker("idle", endpoint: "\(endpoint),\(try deadEndpoint())", slots: 2)
            let hello = await coordinator.next { if case .workerHello(let hello) = $0 { hello } else { nil } }
            XCTAssertNotNil(hello, harness.allOutput)
            let identity = try XCTUnwrap(coordinator.lastIdentity)
            coordinator.send(
                .welcome(Welcome(heartbeatIntervalMs: 100, coordinatorID: "played", acceptsBatches: true)), to: identity
            )
            // Twenty heartbeats at 100 ms: the old liveness probe asked for a status once an interval.
            var heartbeats = 0
            while heartbeats < 20 {
                let next = await coordinator.next { $0 }
                let message = try XCTUnwrap(next, "the worker went quiet:\n\(harness.allOutput)")
                switch message {
                case .heartbeat: heartbeats += 1
                default: XCTFail("an idle worker sent \(message)")
                }
            }
            XCTAssertFalse(worker.outputText.contains("turning"), "the connection is live: \(worker.outputText)")
        } catch {
            await coordinator.close()
            await context.terminate()
            throw error
        }
        await coordinator.close()
        await context.terminate()
    }
}
