import Foundation
import ShiftworkTestSupport
import XCTest

/// A coordinator pair (`--ha`, docs/failover.md) on two "hosts": each coordinator in a network namespace of its
/// own, with a link to the root namespace (where the workers, the client and the origin run, reaching both) and
/// a veth between the two namespaces alone, which carries the pair's link (`--ha-listen`/`--ha-peer`). That veth
/// is cut mid-batch: the pair must never have two active coordinators (both statuses polled throughout), the
/// batch keeps running on the active one and finishes with every item once; healed, the passive one catches up
/// with the active one's journal.
///
/// Needs root and `ip netns` (iproute2); skipped, saying why, where that is not possible.
final class PairPartitionTests: XCTestCase {
    private var namespaces: [NetworkNamespace] = []
    private var harness: ClusterHarness!
    private var origin: TestHTTPServer?

    override func setUp() async throws {
        do {
            namespaces.append(try await NetworkNamespace.create(links: 1))
            namespaces.append(try await NetworkNamespace.create(links: 1))
        } catch let unavailable as NetworkNamespace.Unavailable {
            for namespace in namespaces { await namespace.destroy() }
            throw XCTSkip("this test runs each coordinator of a pair in a network namespace of its own: \(unavailable)")
        }
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        await harness?.stopAll()
        origin?.shutdown()
        for namespace in namespaces { await namespace.destroy() }
    }

    func testACutBetweenThePairAloneNeverMakesTwoActiveAndThePassiveCatchesUpWhenHealed() async throws {
        let (hostA, hostB) = (namespaces[0], namespaces[1])
        let between = try await hostA.peerLink(to: hostB)
        // Each coordinator serves on its namespace's address of its link to the root namespace, and speaks to
        // the other over `between` only. The namespaces are the test's own: fixed ports collide with nothing.
        let endpoints = [hostA, hostB].map { "tcp://\($0.links[0].namespaceAddress):5570" }
        for (index, (host, role)) in [(hostA, "primary"), (hostB, "backup")].enumerated() {
            let data = harness.scratch.appendingPathComponent("data-\(role)")
            try harness.launch(
                "coordinator-\(role)", in: host,
                [
                    "coordinator", "--listen", endpoints[index], "--insecure", "--data-dir", data.path,
                    "--ha", role, "--ha-listen", "tcp://\(index == 0 ? between.address : between.peerAddress):5580",
                    "--ha-peer", "tcp://\(index == 0 ? between.peerAddress : between.address):5580",
                    "--failover-timeout", "1",
                ])
        }
        let both = endpoints.joined(separator: ",")
        try await waitForPair(endpoints) { $0 == ["active", "passive"] }

        // Slow downloads (about a second each) over two workers of two slots: the batch outlasts the cut by
        // many failover timeouts.
        let origin = try TestHTTPServer()
        self.origin = origin
        let count = 16
        let urls = try (0..<count).map { index in
            let bytes = try SyntheticImages.make(width: 96, height: 64, format: .png, seed: UInt64(index))
            let path = "/pair/\(index).png"
            origin.serve(
                path: path,
                response: .slow(
                    contentType: "image/png", body: bytes, chunkSize: max(1, bytes.count / 4),
                    interval: .milliseconds(250), initialDelay: .zero))
            return origin.url(path)
        }
        for id in ["w1", "w2"] {
            try harness.launch(id, ["worker", "--slots", "2", "--worker-id", id, "--coordinator", both])
        }
        try await harness.waitForStatus(endpoints[0]) { statusWorkerIDs($0) == ["w1", "w2"] }
        let out = harness.scratch.appendingPathComponent("out")
        let submit = try harness.launch(
            "submit", ["submit"] + urls + ["--out", out.path, "--json", "--coordinator", both])
        try await harness.waitForStatus(endpoints[0], timeout: .seconds(120)) { status in
            status.objects("batches").first.map { $0.int("succeeded") > 0 } ?? false
        }

        // The cut: the pair's own link only. Until the batch is done, and after, both are polled: never two active.
        try await hostA.setPeerLink(between, up: false)
        var polls = 0
        var aloneSeen = false
        while submit.isRunning || !aloneSeen {
            let roles = try await pairRoles(endpoints)
            XCTAssertFalse(
                roles == ["active", "active"], "two active coordinators during the partition:\n\(harness.allOutput)")
            XCTAssertEqual(roles[0], "active", "the active coordinator keeps serving:\n\(harness.allOutput)")
            if let a = try? await harness.status(endpoints[0]), pairField(a, "history") == "active-alone" {
                // It stopped waiting for its silent peer: the failover timeout has passed during the cut.
                aloneSeen = true
            }
            polls += 1
            guard polls < 2_000 else { return XCTFail("the batch never finished:\n\(harness.allOutput)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        let exit = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, "the batch finishes on the active coordinator:\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(submit.outputText.utf8)) as? [String: Any],
            submit.outputText)
        XCTAssertEqual(document.int("succeeded"), count, submit.outputText)
        XCTAssertEqual(
            document.objects("items").map { $0.int("index") }.sorted(), Array(0..<count), "every item once")
        let batch = try XCTUnwrap(document["batch"] as? String)

        // Healed: the passive one catches up (it holds the active one's whole journal) and the roles stay.
        try await hostA.setPeerLink(between, up: true)
        try await waitForPair(endpoints) { roles in roles == ["active", "passive"] }
        var positions: [[Int]?] = []
        for _ in 0..<600 {
            let active = try await harness.status(endpoints[0])
            let passive = try await harness.status(endpoints[1])
            positions = [pairPosition(active), pairPosition(passive)]
            if pairField(passive, "state") == "passive", positions[0] != nil, positions[0] == positions[1] { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertTrue(
            positions.count == 2 && positions[0] != nil && positions[0] == positions[1],
            "the passive coordinator holds the active one's whole journal after the heal: \(positions)\n\(harness.allOutput)"
        )
        // And the batch the active one finished alone is in it.
        let mirrored = try await harness.status(endpoints[1], batch: batch)
        XCTAssertEqual(
            mirrored.objects("batches").first { $0["id"] as? String == batch }?.int("succeeded"), count,
            "the passive coordinator's journal has the batch finished during the cut")
    }

    // MARK: Polling the pair

    /// Each coordinator's state as its own status says ("active", "passive", a starting state; nil: no answer).
    private func pairRoles(_ endpoints: [String]) async throws -> [String?] {
        var roles: [String?] = []
        for endpoint in endpoints {
            roles.append((try? await harness.status(endpoint)).flatMap { pairField($0, "state") })
        }
        return roles
    }

    /// Polls both coordinators until `condition` holds of their states; throws with every output when it never does.
    private func waitForPair(
        _ endpoints: [String], timeout: Duration = .seconds(60), until condition: ([String?]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        var last: [String?] = []
        while ContinuousClock.now < deadline {
            last = try await pairRoles(endpoints)
            XCTAssertFalse(last == ["active", "active"], "two active coordinators:\n\(harness.allOutput)")
            if condition(last) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("the pair never reached the states waited for; last \(last)\n\(harness.allOutput)")
    }
}

/// A field of the `pair` object in `status --json` (the coordinator's state, history, …).
func pairField(_ status: [String: Any], _ key: String) -> String? {
    (status["pair"] as? [String: Any])?[key] as? String
}

/// The journal position `status --json` reports for a coordinator of a pair: (term, records).
func pairPosition(_ status: [String: Any]) -> [Int]? {
    guard let position = (status["pair"] as? [String: Any])?["position"] as? [String: Any] else { return nil }
    return [position.int("term"), position.int("records")]
}
