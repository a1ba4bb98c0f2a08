import Foundation
import ShiftworkTestSupport
import XCTest

/// A coordinator pair (`--ha`, docs/failover.md) on two "hosts": each coordinator in a network namespace of its
/// own, with a link to the root namespace (where the workers, the client and the origin run, reaching both) and
/// a veth between the two namespaces alone, which carries the pair's link (`--ha-listen`/`--ha-peer`). That veth
/// is cut mid-batch: the pair must never have two active coordinators (both statuses polled throughout), the
/// batch keeps running on the active one and finishes with every item once; healed, the passive one catches up
/// with the active one's journal.
/// (`PairOnTwoHostsTestCase`: needs root and `ip netns`.)
final class PairPartitionTests: PairOnTwoHostsTestCase {
    func testACutBetweenThePairAloneNeverMakesTwoActiveAndThePassiveCatchesUpWhenHealed() async throws {
        let ((hostA, _), between, endpoints, coordinators) = try await startPair()
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
        let caughtUpBefore = occurrences(of: Self.caughtUp, in: coordinators[0])
        var polls = 0
        // Until the batch is done, and at least until the active one has gone on alone (its peer silent for the
        // failover timeout: from then on the passive one could take over if anything asked it to).
        while submit.isRunning || !coordinators[0].outputText.contains(Self.goingOnAlone) {
            let roles = try await pairRoles(endpoints)
            XCTAssertFalse(
                roles == ["active", "active"], "two active coordinators during the partition:\n\(harness.allOutput)")
            XCTAssertEqual(roles[0], "active", "the active coordinator keeps serving:\n\(harness.allOutput)")
            polls += 1
            guard polls < 2_000 else {
                return XCTFail("the batch never finished, or the active one never went on alone:\n\(harness.allOutput)")
            }
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

        // Healed: the passive one catches up (the active one says its peer holds its whole journal again, which
        // now includes the batch finished during the cut) and the roles stay.
        try await hostA.setPeerLink(between, up: true)
        for _ in 0..<600 where occurrences(of: Self.caughtUp, in: coordinators[0]) <= caughtUpBefore {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertGreaterThan(
            occurrences(of: Self.caughtUp, in: coordinators[0]), caughtUpBefore,
            "the passive coordinator did not catch up after the heal:\n\(harness.allOutput)")
        let healed = try await pairRoles(endpoints)
        XCTAssertEqual(healed, ["active", "passive"], "the roles stay after the heal:\n\(harness.allOutput)")
    }

    /// What the active coordinator logs when its peer holds its whole journal (the rules' `peerCaughtUp`), and
    /// when its peer fell silent for the failover timeout and it goes on alone.
    private static let caughtUp = "holds the whole journal"
    private static let goingOnAlone = "going on alone"

    private func occurrences(of text: String, in process: ManagedProcess) -> Int {
        process.outputText.components(separatedBy: text).count - 1
    }

    // MARK: Polling the pair

    /// Each coordinator's state as its own `status` says: the `pair` object's state when the reply has one, else
    /// "active" when it answered, "passive" or "starting" when it refused as such; nil when nothing answered.
    private func pairRoles(_ endpoints: [String]) async throws -> [String?] {
        var roles: [String?] = []
        for endpoint in endpoints {
            let (status, output) = try await harness.run(["status", "--json", "--coordinator", endpoint])
            if status == 0 {
                let reply = output.firstIndex(of: "{").flatMap {
                    try? JSONSerialization.jsonObject(with: Data(output[$0...].utf8)) as? [String: Any]
                }
                roles.append(reply.map { pairField($0, "state") ?? "active" })
            } else if output.contains("passive one of a pair") || output.contains("of a pair is not active") {
                // Refused as the passive one ("… of a pair is not active" once its peer fell silent).
                roles.append("passive")
            } else {
                roles.append(output.contains("of a pair is starting") ? "starting" : nil)
            }
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
