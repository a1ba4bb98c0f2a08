import Foundation
import ShiftworkTestSupport
import XCTest

/// The witnessed position (docs/failover.md, "The witnessed position") with real processes: a coordinator pair
/// on two "hosts" (a network namespace each, the pair's link on a veth between the two alone), a worker and a
/// client in the root namespace reaching both. The pair settles in step; the link between the two coordinators
/// is cut, so the active one goes on alone (after the failover timeout) and acknowledges items to the client;
/// then the client loses the active one (its host cut from everyone) and turns to the passive one. That one
/// was in step when it last heard its peer, its peer is silent, and a client turns to it: without the witness it
/// would take over, from a journal that lacks what the client was told. It must refuse, say why, and stay
/// passive; once the active one is reachable again, the client's batch finishes there with nothing lost.
/// (`PairOnTwoHostsTestCase`: needs root and `ip netns`.)
final class PairWitnessTests: PairOnTwoHostsTestCase {
    func testAPassiveCoordinatorBehindWhatAClientWasAcknowledgedDoesNotTakeOverAndNothingIsLost() async throws {
        let ((hostA, _), between, endpoints, coordinators) = try await startPair()
        let (active, passive) = (coordinators[0], coordinators[1])
        let both = endpoints.joined(separator: ",")

        // In step: the active one holds acknowledgements for its peer, which heard so (`peer_in_step`) and
        // would therefore take over once its peer is silent and a client turns to it.
        let inStep = await active.waitForLine(timeout: .seconds(60)) { $0.contains(Self.caughtUp) }
        XCTAssertNotNil(inStep, "the pair never got in step:\n\(harness.allOutput)")
        try harness.launch("w1", ["worker", "--slots", "2", "--worker-id", "w1", "--coordinator", both])
        try await harness.waitForStatus(endpoints[0]) { statusWorkerIDs($0) == ["w1"] }
        // Let the in-step announcement reach the passive one (it is sent at once, and again every heartbeat).
        try await Task.sleep(for: .seconds(1))

        // The pair's own link is cut: the active one goes on alone once its peer is silent for the timeout.
        try await hostA.setPeerLink(between, up: false)
        let alone = await active.waitForLine(timeout: .seconds(60)) { $0.contains(Self.goingOnAlone) }
        XCTAssertNotNil(alone, "the active coordinator never went on alone:\n\(harness.allOutput)")

        // The client's batch: two items that finish at once (acknowledged by the active one alone), two whose
        // first download stalls long enough for the client to lose the active one mid-batch.
        let origin = try TestHTTPServer()
        self.origin = origin
        let urls = try (0..<4).map { index in
            let bytes = try SyntheticImages.make(width: 96, height: 64, format: .png, seed: UInt64(index))
            let path = "/witness/\(index).png"
            let content = TestHTTPServer.Response.content(status: .ok, contentType: "image/png", body: bytes)
            let stalled = TestHTTPServer.Response.slow(
                contentType: "image/png", body: bytes, chunkSize: max(1, bytes.count / 30),
                interval: .seconds(1), initialDelay: .zero)
            origin.serve(path: path, response: index < 2 ? content : .sequence([stalled], then: content))
            return origin.url(path)
        }
        let out = harness.scratch.appendingPathComponent("out")
        let client = try harness.launch(
            "client-x",
            ["submit"] + urls + ["--out", out.path, "--json", "--timeout", "60", "--coordinator", both])
        for _ in 0..<600 where outputs(out).count < 2 && client.isRunning {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(
            outputs(out).count, 2, "the active coordinator alone acknowledges two items:\n\(harness.allOutput)")
        XCTAssertTrue(client.isRunning, "the batch ended before the cut:\n\(client.outputText)")

        // The client loses the active one (its host cut from everyone; it keeps running) and turns to the
        // passive one, whose journal lacks the batch: it refuses, says why, and does not take over.
        try await hostA.setLink(hostA.links[0], up: false)
        let refused = await passive.waitForLine(timeout: .seconds(60)) { $0.contains(Self.refusedBehindWitness) }
        XCTAssertNotNil(refused, "the passive coordinator did not refuse on the witness:\n\(harness.allOutput)")
        XCTAssertFalse(
            passive.outputText.contains(Self.tookOver),
            "the passive coordinator took over behind what the client was acknowledged:\n\(passive.outputText)")

        // The active one reachable again: the client (and the worker) turn back to it, and the batch finishes
        // there: every item once, the two acknowledged before the cut among them.
        try await hostA.setLink(hostA.links[0], up: true)
        let exit = await client.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(exit, 0, "the batch finishes on the coordinator that holds it:\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(client.outputText.utf8)) as? [String: Any],
            client.outputText)
        XCTAssertEqual(document.int("succeeded"), urls.count, client.outputText)
        XCTAssertEqual(document.objects("items").map { $0.int("index") }.sorted(), [0, 1, 2, 3], "every item once")
        XCTAssertEqual(outputs(out), ["0.png", "1.png", "2.png", "3.png"], "every output once, none written twice")
        XCTAssertFalse(
            passive.outputText.contains(Self.tookOver),
            "the passive coordinator took over behind what the client was acknowledged:\n\(passive.outputText)")
        XCTAssertFalse(active.outputText.contains(Self.steppedDown), active.outputText)
        // Its status names its journal as it is (the batch and its items), not as it was when it became active.
        let status = try await harness.status(endpoints[0])
        let records = (status["pair"] as? [String: Any])?["records"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(records, 5, "a batch accepted and four items finished: \(status)")
    }

    /// What the coordinators log: the active one holding acknowledgements for its peer, going on alone, stepping
    /// down; the passive one refusing a request behind its witness, and taking over.
    private static let caughtUp = "acknowledgements now wait for it"
    private static let goingOnAlone = "going on alone"
    private static let refusedBehindWitness = "refused a request whose witnessed journal position is beyond"
    private static let tookOver = "now the active one of its pair"
    private static let steppedDown = "now the passive one of its pair"

    /// Files written into `directory`, sorted.
    private func outputs(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }
}
