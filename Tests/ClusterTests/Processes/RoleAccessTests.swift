import Cluster
import Foundation
import Messaging
import ShiftworkTestSupport
import XCTest

/// Roles for keys, end to end over real processes on loopback TCP with CurveZMQ: a coordinator started
/// with `--allow-workers`, `--allow-clients` and `--allow-admins`, real workers and CLI clients with their
/// own keys. Each rule of `AccessPolicy` through the socket, the refusals logged and counted, ownership
/// kept across a restart on the same data directory, and SIGHUP reloading the lists.
final class RoleAccessTests: ClusterTestCase {

    /// Keys for every name, and a directory per role holding the `.pub` of the names given for it.
    private struct RoleLists {
        let keys: TestKeys
        let workers: URL
        let clients: URL
        let admins: URL

        func arguments() -> [String] {
            [
                "--secret-key", keys.secretKey("coordinator"), "--allow-workers", workers.path,
                "--allow-clients", clients.path, "--allow-admins", admins.path,
            ]
        }

        /// Puts `name`'s public key on the list in `directory`.
        func add(_ name: String, to directory: URL) throws {
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: keys.publicKey(name)),
                to: directory.appendingPathComponent("\(name).pub"))
        }
    }

    private func makeLists(
        workers: [String], clients: [String], admins: [String], unlisted: [String] = []
    ) async throws -> RoleLists {
        let names = Array(Set(workers + clients + admins + unlisted)).sorted()
        let keys = try await TestKeys(in: harness.scratch, allowed: [], unlisted: names)
        let lists = RoleLists(
            keys: keys, workers: harness.scratch.appendingPathComponent("workers"),
            clients: harness.scratch.appendingPathComponent("clients"),
            admins: harness.scratch.appendingPathComponent("admins"))
        for (directory, members) in [(lists.workers, workers), (lists.clients, clients), (lists.admins, admins)] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for name in members { try lists.add(name, to: directory) }
        }
        return lists
    }

    /// Starts a coordinator with the role lists (and `extra`); returns it, its endpoint and its metrics URL.
    private func startCoordinator(
        _ lists: RoleLists, _ extra: [String] = []
    ) async throws -> (ManagedProcess, String, String) {
        let coordinator = try harness.launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*",
                "--metrics-listen", "127.0.0.1:0",
            ] + lists.arguments() + extra)
        let listening = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        let metrics = await coordinator.waitForLine { $0.hasPrefix("metrics on ") }
        guard let endpoint = listening?.components(separatedBy: "listening on ").last,
            let metricsURL = metrics?.components(separatedBy: "metrics on ").last
        else { throw HarnessError("the coordinator did not start:\n\(coordinator.outputText)") }
        return (
            coordinator, endpoint.trimmingCharacters(in: .whitespaces), metricsURL.trimmingCharacters(in: .whitespaces)
        )
    }

    /// Runs a CLI command as the key `name`.
    private func run(
        _ arguments: [String], as name: String, _ lists: RoleLists, endpoint: String
    ) async throws -> (status: Int32?, output: String) {
        try await harness.run(
            arguments + ["--coordinator", endpoint] + lists.keys.peerArguments(name), timeout: .seconds(60))
    }

    /// The IDs of the batches `status --json` lists for `name`.
    private func listedBatches(as name: String, _ lists: RoleLists, endpoint: String) async throws -> Set<String> {
        let (status, output) = try await run(["status", "--json"], as: name, lists, endpoint: endpoint)
        XCTAssertEqual(status, 0, output)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        return Set(object.objects("batches").compactMap { $0["id"] as? String })
    }

    /// Submits one served image as `name` and waits for the batch to finish; returns its ID.
    private func submitImage(as name: String, _ lists: RoleLists, endpoint: String) async throws -> String {
        let image = try serveImage("\(name).png", width: 64, height: 48, seed: 5)
        let out = harness.scratch.appendingPathComponent("out-\(name)-\(UUID().uuidString.prefix(6))")
        let (status, output) = try await run(
            ["submit", image.url, "--out", out.path], as: name, lists, endpoint: endpoint)
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(output.contains("1 item: 1 succeeded"), output)
        let match = try XCTUnwrap(output.range(of: #"batch b-[0-9a-f]+"#, options: .regularExpression), output)
        return String(output[match].dropFirst("batch ".count))
    }

    private func assertForbidden(
        _ result: (status: Int32?, output: String), _ expected: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.status, 1, result.output, file: file, line: line)
        XCTAssertTrue(
            result.output.contains("the coordinator refused the request: "), result.output, file: file, line: line)
        XCTAssertTrue(
            result.output.contains(expected), "expected '\(expected)' in:\n\(result.output)", file: file, line: line)
    }

    /// Sends `FetchResults` for `batchID` as `name` (an in-process client: the CLI's `results` asks for the
    /// status first) and checks it is refused with `expected`.
    private func assertFetchRefused(
        _ batchID: String, as name: String, _ lists: RoleLists, endpoint: String,
        expected: String
    ) async throws {
        var options = SocketOptions()
        options.curve = .client(
            try CurveKeyPair.load(secretKeyFile: lists.keys.secretKey(name)),
            serverKey: try CurvePublicKey.load(file: lists.keys.publicKey("coordinator")))
        try await ClusterClient.withConnection(
            endpoint: endpoint, responseTimeout: .seconds(30), socketOptions: options
        ) {
            client in
            do {
                for try await event in await client.results(batchID: batchID) {
                    XCTFail("\(name) fetched \(batchID): \(event)")
                }
                XCTFail("the fetch of \(batchID) by \(name) was not refused")
            } catch let error as ClusterClientError {
                guard case .refused(let reason) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains(expected), reason)
            }
        }
    }

    func testEachRoleDoesOnlyWhatItMayAndClientsSeeOnlyTheirOwnBatchesAcrossARestart() async throws {
        let lists = try await makeLists(
            workers: ["worker", "both"], clients: ["alice", "bob", "both"], admins: ["admin"])
        let data = harness.scratch.appendingPathComponent("data")
        var (coordinator, endpoint, metricsURL) = try await startCoordinator(lists, ["--data-dir", data.path])
        XCTAssertTrue(
            coordinator.outputText.contains("(workers 2, clients 3, admins 1; SIGHUP reloads the lists)"),
            coordinator.outputText)
        try harness.startWorker("worker", endpoint: endpoint, keys: lists.keys)

        // Clients submit; each batch is its submitter's.
        let aliceBatch = try await submitImage(as: "alice", lists, endpoint: endpoint)
        let bobBatch = try await submitImage(as: "bob", lists, endpoint: endpoint)
        // A key on the worker and the client lists has both rights: it submits, and it serves as a worker.
        let bothBatch = try await submitImage(as: "both", lists, endpoint: endpoint)
        let bothWorker = try harness.startWorker("both-worker", endpoint: endpoint, keys: lists.keys, keyName: "both")

        // A client lists its own batches only; an administrator all of them. Both see the workers.
        let aliceSees = try await listedBatches(as: "alice", lists, endpoint: endpoint)
        XCTAssertEqual(aliceSees, [aliceBatch])
        let bobSees = try await listedBatches(as: "bob", lists, endpoint: endpoint)
        XCTAssertEqual(bobSees, [bobBatch])
        let adminSees = try await listedBatches(as: "admin", lists, endpoint: endpoint)
        XCTAssertEqual(adminSees, [aliceBatch, bobBatch, bothBatch])
        let workersSeen = try await harness.waitForStatus(endpoint, keyArguments: lists.keys.peerArguments("alice")) {
            $0.objects("workers").count == 2
        }
        XCTAssertEqual(
            Set(workersSeen.objects("workers").compactMap { $0["id"] as? String }), ["worker", "both-worker"],
            "a client sees the workers, including the one whose key is also a client's:\n\(harness.allOutput)")
        XCTAssertTrue(bothWorker.isRunning, bothWorker.outputText)

        // A client may not read, fetch or cancel another's batch; an administrator may.
        let notOwner = "batch \(aliceBatch) was submitted by another client"
        assertForbidden(try await run(["status", aliceBatch], as: "bob", lists, endpoint: endpoint), notOwner)
        assertForbidden(
            try await run(
                ["results", aliceBatch, "--out", harness.scratch.appendingPathComponent("stolen").path],
                as: "bob", lists, endpoint: endpoint), notOwner)
        assertForbidden(
            try await run(["cancel", aliceBatch], as: "bob", lists, endpoint: endpoint), "needs the admin role")
        assertForbidden(
            try await run(
                ["retry", aliceBatch, "--out", harness.scratch.appendingPathComponent("stolen-retry").path],
                as: "bob", lists, endpoint: endpoint), "fetches and retries only its own batches")
        let ownRetry = try await run(["retry", aliceBatch], as: "alice", lists, endpoint: endpoint)
        XCTAssertEqual(ownRetry.status, 0, ownRetry.output)
        XCTAssertTrue(ownRetry.output.contains("nothing to retry"), ownRetry.output)
        let adminRetry = try await run(["retry", aliceBatch], as: "admin", lists, endpoint: endpoint)
        XCTAssertEqual(adminRetry.status, 0, adminRetry.output)
        try await assertFetchRefused(aliceBatch, as: "bob", lists, endpoint: endpoint, expected: notOwner)
        let own = try await run(["status", aliceBatch], as: "alice", lists, endpoint: endpoint)
        XCTAssertEqual(own.status, 0, own.output)
        let adminResults = try await run(
            ["results", aliceBatch, "--out", harness.scratch.appendingPathComponent("admin-out").path],
            as: "admin", lists, endpoint: endpoint)
        XCTAssertEqual(adminResults.status, 0, adminResults.output)
        let adminCancel = try await run(["cancel", bobBatch], as: "admin", lists, endpoint: endpoint)
        XCTAssertEqual(adminCancel.status, 0, adminCancel.output)

        // A worker key neither submits nor reads; an administrator does not submit (that is a client's right).
        assertForbidden(
            try await run(
                ["submit", "http://127.0.0.1:1/x.png", "--out", harness.scratch.path], as: "worker",
                lists, endpoint: endpoint), "submitting a batch needs the client role")
        assertForbidden(
            try await run(["status"], as: "worker", lists, endpoint: endpoint),
            "listing batches needs the client or admin role")
        assertForbidden(
            try await run(
                ["submit", "http://127.0.0.1:1/x.png", "--out", harness.scratch.path], as: "admin",
                lists, endpoint: endpoint), "this key has the admin role only")

        // A client key cannot register as a worker: the worker stops and says which role it needs.
        let impostor = try harness.startWorker("impostor", endpoint: endpoint, keys: lists.keys, keyName: "alice")
        let impostorStatus = await impostor.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(impostorStatus, 1, impostor.outputText)
        XCTAssertTrue(impostor.outputText.contains("needs the worker role"), impostor.outputText)

        // Every refusal is logged with the key's role, and counted by role, request and reason.
        XCTAssertTrue(
            coordinator.outputText.contains("refused a request: the key lacks the role it needs"),
            coordinator.outputText)
        XCTAssertTrue(coordinator.outputText.contains(try lists.keys.z85("alice")), coordinator.outputText)
        let page = try await TestHTTPClient.get(metricsURL).text
        let samples = MetricsTests.samples(page)
        for (series, value) in [
            // `results` and `retry` ask for the batch's status first; the FetchResults was sent by the client above.
            #"shiftwork_refusals_total{role="client",request="status",reason="not_owner"}"#: 3.0,
            #"shiftwork_refusals_total{role="client",request="retry",reason="not_owner"}"#: 1,
            #"shiftwork_refusals_total{role="client",request="results",reason="not_owner"}"#: 1,
            #"shiftwork_refusals_total{role="client",request="cancel",reason="not_owner"}"#: 1,
            #"shiftwork_refusals_total{role="worker",request="submit",reason="needs_client"}"#: 1,
            #"shiftwork_refusals_total{role="worker",request="status",reason="needs_client_or_admin"}"#: 1,
            #"shiftwork_refusals_total{role="admin",request="submit",reason="needs_client"}"#: 1,
        ] {
            XCTAssertEqual(samples[series], value, "\(series) in:\n\(page)")
        }
        // The impostor's hello, and any heartbeat it sent before it heard.
        XCTAssertGreaterThanOrEqual(
            samples[#"shiftwork_refusals_total{role="client",request="worker",reason="needs_worker"}"#] ?? 0, 1, page)

        // Ownership is journaled: after a restart on the same data directory, it still holds.
        _ = await coordinator.stop()
        (coordinator, endpoint, metricsURL) = try await startCoordinator(lists, ["--data-dir", data.path])
        let aliceAfter = try await listedBatches(as: "alice", lists, endpoint: endpoint)
        XCTAssertEqual(aliceAfter, [aliceBatch])
        let bobAfter = try await listedBatches(as: "bob", lists, endpoint: endpoint)
        XCTAssertEqual(bobAfter, [bobBatch])
        assertForbidden(
            try await run(
                ["results", aliceBatch, "--out", harness.scratch.appendingPathComponent("stolen-2").path],
                as: "bob", lists, endpoint: endpoint), notOwner)
        let fetched = harness.scratch.appendingPathComponent("alice-again")
        let aliceResults = try await run(
            ["results", aliceBatch, "--out", fetched.path], as: "alice", lists, endpoint: endpoint)
        XCTAssertEqual(aliceResults.status, 0, aliceResults.output)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: fetched.appendingPathComponent("alice.png").path),
            aliceResults.output)
    }

    func testRoleListsWithoutAnyKeyOrWithoutASecretKeyAreRefusedAtStartSayingWhy() async throws {
        let lists = try await makeLists(workers: [], clients: [], admins: [])
        let (empty, emptyOutput) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0"] + lists.arguments(),
            timeout: .seconds(30))
        XCTAssertEqual(empty, 1, emptyOutput)
        XCTAssertTrue(
            emptyOutput.contains("the allow-lists hold no public key (--allow-workers \(lists.workers.path)"),
            emptyOutput)
        let (keyless, keylessOutput) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0", "--allow-clients", lists.clients.path],
            timeout: .seconds(30))
        XCTAssertEqual(keyless, 1, keylessOutput)
        XCTAssertTrue(keylessOutput.contains("--allow-clients needs --secret-key"), keylessOutput)
    }

    func testSIGHUPReloadsTheListsAddingAndRemovingKeysWithoutARestart() async throws {
        let lists = try await makeLists(workers: ["worker"], clients: ["alice"], admins: [], unlisted: ["newcomer"])
        let (coordinator, endpoint, _) = try await startCoordinator(lists)
        let worker = try harness.startWorker("worker", endpoint: endpoint, keys: lists.keys)
        _ = try await harness.waitForStatus(endpoint, keyArguments: lists.keys.peerArguments("alice")) {
            $0.objects("workers").count == 1
        }

        // Not on any list yet: refused at the handshake.
        let before = try await run(["status"], as: "newcomer", lists, endpoint: endpoint)
        XCTAssertEqual(before.status, 1, before.output)
        XCTAssertTrue(before.output.contains("refused this client's public key"), before.output)

        // Its key is added to the clients' list and the coordinator told with SIGHUP: it gets in, as a client.
        try lists.add("newcomer", to: lists.clients)
        kill(coordinator.pid, SIGHUP)
        let reloaded = await coordinator.waitForLine { $0.contains("allow-lists loaded") && $0.contains("clients 2") }
        XCTAssertNotNil(reloaded, coordinator.outputText)
        let after = try await run(["status"], as: "newcomer", lists, endpoint: endpoint)
        XCTAssertEqual(after.status, 0, after.output)
        let asWorker = try await run(["worker", "--worker-id", "w"], as: "newcomer", lists, endpoint: endpoint)
        XCTAssertEqual(asWorker.status, 1, asWorker.output)
        XCTAssertTrue(asWorker.output.contains("needs the worker role"), asWorker.output)

        // A list that cannot be read leaves the lists in force, and says why.
        try "not a key\n".write(
            to: lists.admins.appendingPathComponent("broken.pub"), atomically: true, encoding: .utf8)
        kill(coordinator.pid, SIGHUP)
        let failed = await coordinator.waitForLine { $0.contains("could not reload the allow-lists") }
        XCTAssertNotNil(failed, coordinator.outputText)
        XCTAssertTrue(failed?.contains("--allow-admins") == true, failed ?? "")
        try FileManager.default.removeItem(at: lists.admins.appendingPathComponent("broken.pub"))
        let stillIn = try await run(["status"], as: "newcomer", lists, endpoint: endpoint)
        XCTAssertEqual(stillIn.status, 0, stillIn.output)

        // Keys are removed and SIGHUP sent: a new connection is refused at the handshake, and a worker
        // connected all along has its next message refused, for its role is gone: it stops and says why.
        try FileManager.default.removeItem(at: lists.clients.appendingPathComponent("newcomer.pub"))
        try FileManager.default.removeItem(at: lists.workers.appendingPathComponent("worker.pub"))
        kill(coordinator.pid, SIGHUP)
        let removed = await coordinator.waitForLine {
            $0.contains("allow-lists loaded") && $0.contains("workers 0, clients 1")
        }
        XCTAssertNotNil(removed, coordinator.outputText)
        let gone = try await run(["status"], as: "newcomer", lists, endpoint: endpoint)
        XCTAssertEqual(gone.status, 1, gone.output)
        XCTAssertTrue(gone.output.contains("refused this client's public key"), gone.output)
        let workerStatus = await worker.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(workerStatus, 1, worker.outputText)
        XCTAssertTrue(
            worker.outputText.contains("this key is on none of the coordinator's allow-lists (any more)"),
            worker.outputText)
        XCTAssertTrue(coordinator.isRunning, "SIGHUP must not stop the coordinator:\n\(coordinator.outputText)")
    }
}
