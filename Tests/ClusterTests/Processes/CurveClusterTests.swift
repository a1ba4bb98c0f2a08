import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// CurveZMQ end to end, over real processes on loopback TCP: a coordinator with keys admits only the
/// workers and clients on its allow-list, and what crosses the wire is encrypted.
final class CurveClusterTests: ClusterTestCase {

    func testListedPeersProcessABatchAndUnlistedWorkerAndClientAreRefused() async throws {
        let keys = try await TestKeys(in: harness.scratch, allowed: ["worker-ok", "client-ok"], unlisted: ["intruder"])
        let endpoint = try await harness.startCoordinator(keys: keys)
        let coordinator = harness.processes[0]
        XCTAssertTrue(
            coordinator.outputText.contains(
                "CurveZMQ on: public key \(try keys.z85("coordinator")), 2 peer keys allowed"),
            coordinator.outputText)
        try harness.startWorker("worker-ok", endpoint: endpoint, keys: keys)

        // A listed client submits a real batch, which the listed worker processes.
        let image = try serveImage("listed.png")
        let out = harness.scratch.appendingPathComponent("out")
        let (submitted, output) = try await harness.run(
            ["submit", image.url, "--out", out.path, "--coordinator", endpoint] + keys.peerArguments("client-ok"))
        XCTAssertEqual(submitted, 0, harness.allOutput)
        XCTAssertTrue(output.contains("1 item: 1 succeeded"), output)
        let result = try XCTUnwrap(
            FileManager.default.contents(atPath: out.appendingPathComponent("listed.png").path), output)
        XCTAssertEqual(try ImageCodec.decode([UInt8](result)).image.width, 160)

        // An unlisted worker is refused at the handshake: it stops by itself and says what to check.
        let intruder = try harness.startWorker("worker-intruder", endpoint: endpoint, keys: keys, keyName: "intruder")
        let intruderStatus = await intruder.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(intruderStatus, 1, "the unlisted worker was not refused:\n\(intruder.outputText)")
        XCTAssertTrue(
            intruder.outputText.contains("refused this worker's public key: is it on the coordinator's allow-list?"),
            intruder.outputText)

        // An unlisted client is refused at once, with the same advice; so is a client without keys (after its timeout).
        let (clientStatus, clientOutput) = try await harness.run(
            ["status", "--coordinator", endpoint] + keys.peerArguments("intruder"), timeout: .seconds(20))
        XCTAssertEqual(clientStatus, 1, clientOutput)
        XCTAssertTrue(
            clientOutput.contains("refused this client's public key: is it on the coordinator's allow-list?"),
            clientOutput)
        let (plainStatus, plainOutput) = try await harness.run(
            ["status", "--coordinator", endpoint], timeout: .seconds(30))
        XCTAssertEqual(plainStatus, 1, plainOutput)
        XCTAssertTrue(plainOutput.contains("no answer from a coordinator at \(endpoint)"), plainOutput)

        // The coordinator logged the refusal with the key, and only the listed worker is registered.
        let intruderKey = try keys.z85("intruder")
        XCTAssertTrue(
            coordinator.outputText.contains("refused a peer: its public key is not on the allow-list"),
            coordinator.outputText)
        XCTAssertTrue(
            coordinator.outputText.contains(intruderKey),
            "the refusal does not name the key:\n\(coordinator.outputText)")
        let (statusCode, statusJSON) = try await harness.run(
            ["status", "--json", "--coordinator", endpoint] + keys.peerArguments("client-ok"))
        XCTAssertEqual(statusCode, 0, statusJSON)
        let status = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any], statusJSON)
        XCTAssertEqual(status.objects("workers").compactMap { $0["id"] as? String }, ["worker-ok"], statusJSON)
        XCTAssertTrue(coordinator.isRunning, coordinator.outputText)
    }

    func testATcpCoordinatorWithoutKeysRefusesToStartAndSaysHowToFixIt() async throws {
        let (status, output) = try await harness.run(
            ["coordinator", "--listen", "tcp://127.0.0.1:0"], timeout: .seconds(30))
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("shiftwork keygen"), output)
        XCTAssertTrue(output.contains("--insecure"), output)
        XCTAssertTrue(output.contains("SHIFTWORK_INSECURE=1"), output)
    }

    /// A relay between the worker and the coordinator records every byte: with keys, no 32-byte run of
    /// the output image (which crosses that link: the tilt-shift's result; the downloaded image stays on
    /// the worker) appears in it; the same run without keys shows the check can see the output.
    func testACaptureOfTheTrafficHoldsNoImageBytesInClear() async throws {
        let image = try serveImage("captured.jpg", format: .jpeg, seed: 42)
        let (encrypted, output) = try await capture(
            image, keys: try await TestKeys(in: harness.scratch, allowed: ["worker", "client"]))
        XCTAssertGreaterThan(encrypted.count, output.count, "the capture missed the traffic")
        XCTAssertFalse(
            containsAnyWindow(of: output, in: encrypted), "image bytes crossed the wire in clear with CurveZMQ on")

        await harness.stopAll()
        harness = try ClusterHarness()
        let (plain, plainOutput) = try await capture(image, keys: nil)
        XCTAssertTrue(
            containsAnyWindow(of: plainOutput, in: plain),
            "the control run's capture holds no image bytes: the check cannot fail")
    }

    /// Runs a one-image batch with the worker connected through a recording relay; returns the recording.
    private func capture(
        _ image: (url: String, bytes: [UInt8]), keys: TestKeys?
    ) async throws -> (recording: [UInt8], output: [UInt8]) {
        let endpoint = try await harness.startCoordinator(keys: keys)
        let port = try XCTUnwrap(endpoint.split(separator: ":").last.flatMap { Int($0) }, endpoint)
        let relay = try RecordingTCPRelay(upstreamPort: port)
        defer { relay.stop() }
        try harness.startWorker("worker", endpoint: relay.endpoint, keys: keys)
        let out = harness.scratch.appendingPathComponent("out-\(keys == nil ? "plain" : "curve")")
        let (status, output) = try await harness.run(
            ["submit", image.url, "--out", out.path, "--coordinator", endpoint] + (keys?.peerArguments("client") ?? []))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(output.contains("1 item: 1 succeeded"), output)
        let file = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: out.path).first, output)
        return (relay.recording, [UInt8](try Data(contentsOf: out.appendingPathComponent(file))))
    }
}
