import Cluster
import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A pair of coordinators (`--ha primary|backup`, docs/failover.md) as real processes on loopback: a
/// worker and a client given both endpoints; the active one killed with SIGKILL mid-batch, the batch
/// finished on the other with every item exactly once; the killed one restarted as the passive one,
/// caught up, and the roles swapped again.
final class CoordinatorPairProcessTests: ClusterTestCase {
    /// The two coordinators' endpoints (clients and workers) and link endpoints.
    private struct Pair {
        let service: [String]
        let link: [String]
        let data: [URL]
        var both: String { service.joined(separator: ",") }
    }

    private func makePair() throws -> Pair {
        let ports = try (0..<4).map { _ in try freeLoopbackPort() }
        return Pair(
            service: ["tcp://127.0.0.1:\(ports[0])", "tcp://127.0.0.1:\(ports[1])"],
            link: ["tcp://127.0.0.1:\(ports[2])", "tcp://127.0.0.1:\(ports[3])"],
            data: [harness.scratch.appendingPathComponent("data-a"), harness.scratch.appendingPathComponent("data-b")])
    }

    /// Starts coordinator `index` (0: `roles[0]`, 1: `roles[1]`) of `pair` and waits until it listens.
    @discardableResult
    private func start(
        _ index: Int, of pair: Pair, as role: String, extra: [String] = []
    ) async throws -> ManagedProcess {
        let process = try harness.launch(
            "coordinator-\(index == 0 ? "a" : "b")",
            [
                "coordinator", "--listen", pair.service[index], "--insecure", "--data-dir", pair.data[index].path,
                "--ha", role, "--ha-listen", pair.link[index], "--ha-peer", pair.link[1 - index],
                "--failover-timeout", "1.5",
            ] + extra)
        let listening = await process.waitForLine { $0.contains("coordinator listening on") }
        XCTAssertNotNil(listening, process.outputText)
        return process
    }

    /// Files written into `directory`.
    private func outputs(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Serves `count` images whose downloads each take a while, so that a batch is still running when its
    /// coordinator is killed.
    private func slowImages(_ count: Int, prefix: String) throws -> [String] {
        try server.serveSyntheticImages(count, prefix: prefix) { bytes, format in
            .slow(
                contentType: format.mediaType, body: bytes, chunkSize: max(1, bytes.count / 2),
                interval: .milliseconds(150), initialDelay: .milliseconds(250))
        }
    }

    /// Submits `urls` to both coordinators, kills `victim` once `killAfter` outputs are written, and waits
    /// for the client: every item exactly once, no `-2` names.
    private func runBatchKilling(
        _ victim: ManagedProcess, urls: [String], name: String, pair: Pair, killAfter: Int
    ) async throws {
        let out = harness.scratch.appendingPathComponent(name)
        let submit = try harness.launch(
            "submit-\(name)", ["submit"] + urls + ["--out", out.path, "--coordinator", pair.both])
        while outputs(out).count < killAfter {
            guard submit.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertTrue(submit.isRunning, "the batch ended before the kill: \(submit.outputText)")
        await victim.kill9()
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, harness.allOutput)
        let written = outputs(out)
        XCTAssertEqual(written.count, urls.count, "every item exactly once: \(written)\n\(submit.outputText)")
        let expected = urls.compactMap { $0.split(separator: "/").last.map(String.init) }.sorted()
        XCTAssertEqual(written, expected, "an item written twice (NAME-2) or missing")
        XCTAssertTrue(
            submit.outputText.contains("\(urls.count) items: \(urls.count) succeeded, 0 failed"), submit.outputText)
    }

    func testKilledActiveCoordinatorsHandTheirBatchToTheOtherEveryItemOnceRoundAfterRound() async throws {
        let pair = try makePair()
        var a = try await start(0, of: pair, as: "primary")
        var b = try await start(1, of: pair, as: "backup")
        let settled = await a.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(settled, harness.allOutput)
        try harness.startWorker("pair-worker", endpoint: pair.both, slots: 2)

        // Round 1: the primary is active; killed mid-batch, the backup takes over and finishes it.
        try await runBatchKilling(
            a, urls: try slowImages(10, prefix: "round-1"), name: "round-1", pair: pair, killAfter: 3)
        XCTAssertTrue(b.outputText.contains("now the active one of its pair"), b.outputText)

        // The primary comes back: it follows the backup, which holds the newer journal, and catches up.
        a = try await start(0, of: pair, as: "primary")
        let following = await a.waitForLine { $0.contains("now the passive one of its pair") }
        XCTAssertNotNil(following, a.outputText)
        let caughtUp = await b.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(caughtUp, b.outputText)

        // Round 2: the backup killed mid-batch, the primary takes over again.
        try await runBatchKilling(
            b, urls: try slowImages(10, prefix: "round-2"), name: "round-2", pair: pair, killAfter: 3)

        // Round 3: the backup back as the passive one; the primary killed.
        b = try await start(1, of: pair, as: "backup")
        let bFollowing = await b.waitForLine { $0.contains("now the passive one of its pair") }
        XCTAssertNotNil(bFollowing, b.outputText)
        let aCaughtUp = await a.waitForLine(timeout: .seconds(30)) {
            $0.contains("acknowledgements now wait for it")
        }
        XCTAssertNotNil(aCaughtUp, a.outputText)
        try await runBatchKilling(
            a, urls: try slowImages(8, prefix: "round-3"), name: "round-3", pair: pair, killAfter: 2)
        _ = b
    }

    func testASlowBackupHoldsAcknowledgementsAndAStoppedOneIsLeftBehind() async throws {
        let pair = try makePair()
        let a = try await start(0, of: pair, as: "primary")
        let b = try await start(1, of: pair, as: "backup", extra: ["--ha-answer-delay-ms", "700"])
        let settled = await a.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(settled, harness.allOutput)
        try harness.startWorker("pair-worker", endpoint: pair.both, slots: 2)

        // A backup that answers late: the active one holds what it acknowledges, and says how far behind it is.
        let urls = try server.serveSyntheticImages(6, prefix: "slow-backup")
        let out = harness.scratch.appendingPathComponent("slow-backup")
        let submit = try harness.launch("submit", ["submit"] + urls + ["--out", out.path, "--coordinator", pair.both])
        let behind = try await harness.waitForStatus(pair.service[0]) { status in
            let pairStatus = status["pair"] as? [String: Any]
            return (pairStatus?["held_messages"] as? Int ?? 0) > 0 && (pairStatus?["lag_records"] as? Int ?? 0) > 0
        }
        let pairStatus = try XCTUnwrap(behind["pair"] as? [String: Any])
        XCTAssertEqual(pairStatus["role"] as? String, "primary")
        XCTAssertEqual(pairStatus["state"] as? String, "active")
        XCTAssertEqual(pairStatus["peer_state"] as? String, "passive")
        XCTAssertEqual(pairStatus["history"] as? String, "active-with-peer")
        let exit = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(exit, 0, harness.allOutput)
        XCTAssertEqual(outputs(out).count, urls.count)
        let (_, text) = try await harness.run(["status", "--coordinator", pair.service[0]])
        XCTAssertTrue(text.contains("pair: this coordinator primary, active; peer passive"), text)

        // A backup stopped (SIGSTOP): after the failover timeout the active one goes on alone.
        kill(b.pid, SIGSTOP)
        defer { kill(b.pid, SIGCONT) }
        let alone = await a.waitForLine { $0.contains("going on alone") }
        XCTAssertNotNil(alone, a.outputText)
        let more = try server.serveSyntheticImages(4, prefix: "alone")
        let (status, output) = try await harness.run(
            ["submit"] + more + [
                "--out", harness.scratch.appendingPathComponent("alone").path, "--coordinator", pair.both,
            ])
        XCTAssertEqual(status, 0, output)
        let aloneStatus = try await harness.status(pair.service[0])
        XCTAssertEqual((aloneStatus["pair"] as? [String: Any])?["history"] as? String, "active-alone")
    }

    func testTwoCoordinatorsStartedAsPrimarySaySoAndNeitherBecomesActive() async throws {
        let pair = try makePair()
        let a = try await start(0, of: pair, as: "primary")
        let b = try await start(1, of: pair, as: "primary")
        for process in [a, b] {
            let said = await process.waitForLine {
                $0.contains("both coordinators of the pair were started as primary")
            }
            XCTAssertNotNil(said, process.outputText)
        }
        // A client turning to each is refused as by a passive coordinator, for as long as the two hear each other.
        for endpoint in pair.service {
            let refusal = try await harness.withClient(endpoint) { client -> String? in
                do {
                    _ = try await client.status()
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            XCTAssertNotNil(refusal, "a coordinator started alike served a client")
        }
        XCTAssertFalse(a.outputText.contains("now the active one"), a.outputText)
        XCTAssertFalse(b.outputText.contains("now the active one"), b.outputText)
    }
    /// Local photos uploaded to the active coordinator, which is killed before any worker ran them: its
    /// uploads (spooled on its own disk) are gone with it. The client turns to the other coordinator, which
    /// takes over with the batch its journal holds and asks the client for every file again: none fails.
    func testUploadsLostWithAKilledActiveCoordinatorAreAskedForAgainByTheOther() async throws {
        let photos = harness.scratch.appendingPathComponent("photos")
        var names: [String] = []
        for index in 0..<4 {
            let name = String(format: "%02d.jpg", index)
            try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
            let image = try SyntheticImages.make(width: 40 + index, height: 30, format: .jpeg, seed: UInt64(index + 1))
            try Data(image).write(to: photos.appendingPathComponent(name))
            names.append(name)
        }
        let pair = try makePair()
        let a = try await start(0, of: pair, as: "primary")
        _ = try await start(1, of: pair, as: "backup")
        let settled = await a.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(settled, harness.allOutput)

        // No worker yet: the batch is accepted (and held by the backup before the client hears of it), its
        // files uploaded to the active one's spool, and nothing runs.
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit", photos.path, "--out", out.path, "--coordinator", pair.both])
        let accepted = await submit.waitForLine { $0.hasPrefix("batch b-") }
        let batch = String(try XCTUnwrap(accepted?.split(separator: " ")[1].dropLast(), submit.outputText))
        try await harness.waitForStatus(pair.service[0], batch: batch) { status in
            let states = (status.objects("batches").first?.objects("item_states") ?? []).map { $0["state"] as? String }
            return states == ["queued", "queued", "queued", "queued"]
        }
        await a.kill9()

        // A worker that reads no local files joins the pair; the client rides through the failover.
        try harness.startWorker("pair-worker", endpoint: pair.both, slots: 2)
        let status = await submit.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(
            status, 0, "the client sends its files again to the coordinator that took over:\n\(harness.allOutput)")
        XCTAssertTrue(submit.outputText.contains("4 items: 4 succeeded, 0 failed"), submit.outputText)
        for (index, name) in names.enumerated() {
            let bytes = [UInt8](try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(try ImageCodec.decode(bytes).image.width, 40 + index, name)
        }
    }
}
