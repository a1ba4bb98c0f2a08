import Foundation
import ShiftworkTestSupport
import XCTest

/// A real `shiftwork worker` and real HTTP servers on loopback addresses: the worker's default source policy
/// refuses this machine's addresses (permanently, naming the address and the option that allows it), also
/// at a redirect, and `--allow-source-networks` admits them. The harness gives every process
/// `SHIFTWORK_ALLOW_SOURCE_NETWORKS=127.0.0.0/8,::1/128` (`ManagedProcess.testEnvironment`); these tests set
/// it empty to see the default.
final class SourcePolicyProcessTests: ClusterTestCase {
    /// The worker's default policy (the harness's allowance removed).
    private let defaultPolicy = ["SHIFTWORK_ALLOW_SOURCE_NETWORKS": ""]

    /// Submits `urls` with `--retries 2`; returns the exit status, the output and the batch ID.
    private func submit(
        _ urls: [String], endpoint: String
    ) async throws -> (status: Int32?, output: String, batchID: String) {
        let out = harness.scratch.appendingPathComponent("out-\(UUID().uuidString)")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--retries", "2", "--out", out.path, "--coordinator", endpoint])
        let line = output.split(separator: "\n").first { $0.hasPrefix("batch b-") }
        let batchID = try XCTUnwrap(line?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(output)")
        return (status, output, String(batchID))
    }

    func testADefaultWorkerRefusesLoopbackPermanentlyAndTheServerSeesNoRequest() async throws {
        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch(
            "worker", ["worker", "--slots", "2", "--worker-id", "strict", "--coordinator", endpoint],
            environment: defaultPolicy)
        let (url, _) = try serveImage("photo.png")
        let spelled = "http://2130706433:\(server.port)/photo.png"
        let (status, output, batchID) = try await submit([url, spelled], endpoint: endpoint)
        XCTAssertEqual(status, 1, output)
        let failures = output.split(separator: "\n").filter { $0.contains("FAILED") }
        XCTAssertEqual(failures.count, 2, output)
        for line in failures {
            XCTAssertTrue(
                line.contains("refused: address 127.0.0.1 is loopback (this machine), in 127.0.0.0/8"), String(line))
            XCTAssertTrue(line.contains("--allow-source-networks 127.0.0.1/32 or 127.0.0.0/8"), String(line))
        }
        XCTAssertEqual(server.requestCount(path: "/photo.png"), 0, "the origin never saw a request")
        let report = try await harness.status(endpoint, batch: batchID)
        let items = report.objects("batches").first?.objects("item_states") ?? []
        XCTAssertEqual(items.map { $0.int("attempts") }, [1, 1], "a refusal is permanent: not retried\n\(report)")
        XCTAssertEqual(
            items.flatMap { $0.objects("failed_attempts").map { $0.int("transient") } }, [0, 0], "\(report)")
    }

    func testARedirectToADeniedAddressIsRefusedAtTheRedirect() async throws {
        let origin = try TestHTTPServer(host: "127.0.0.2")
        defer { origin.shutdown() }
        let witness = try ConnectionWitness()
        origin.redirect(path: "/outer.png", to: witness.url("/inner.png"))
        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch(
            "worker", ["worker", "--slots", "2", "--worker-id", "redirected", "--coordinator", endpoint],
            environment: ["SHIFTWORK_ALLOW_SOURCE_NETWORKS": "127.0.0.2/32"])
        let (status, output, _) = try await submit([origin.url("/outer.png")], endpoint: endpoint)
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(
            output.contains("redirected to \(witness.url("/inner.png")), refused: address 127.0.0.1 is loopback"),
            output)
        XCTAssertEqual(origin.requestCount(path: "/outer.png"), 1, "the allowed origin answered once: not retried")
        XCTAssertEqual(witness.connections(), 0, "the denied target never saw a connection")
    }

    func testAllowSourceNetworksAdmitsLoopback() async throws {
        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch(
            "worker",
            [
                "worker", "--slots", "2", "--worker-id", "allowing", "--coordinator", endpoint,
                "--allow-source-networks", "127.0.0.0/8",
            ], environment: defaultPolicy)
        let origin = try TestHTTPServer(host: "127.0.0.2")
        defer { origin.shutdown() }
        let (url, _) = try serveImage("photo.png")
        origin.redirect(path: "/outer.png", to: url)
        let (status, output, _) = try await submit([url, origin.url("/outer.png")], endpoint: endpoint)
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(server.requestCount(path: "/photo.png"), 2)
    }

    func testANetworkThatIsNotCIDRIsRefusedAtStartWithTheValueAndAnExample() async throws {
        let endpoint = try await harness.startCoordinator()
        let (optionStatus, optionOutput) = try await harness.run(
            ["worker", "--allow-source-networks", "127.0.0.0/8,localhost", "--coordinator", endpoint])
        XCTAssertEqual(optionStatus, 1, optionOutput)
        XCTAssertTrue(
            optionOutput.contains("--allow-source-networks 127.0.0.0/8,localhost: 'localhost' is not a network"),
            optionOutput)
        XCTAssertTrue(optionOutput.contains("for example --allow-source-networks 127.0.0.0/8,::1/128"), optionOutput)
        let (envStatus, envOutput) = try await harness.run(
            ["worker", "--coordinator", endpoint],
            environment: ["SHIFTWORK_DENY_SOURCE_NETWORKS": "10.0.0.0/33"])
        XCTAssertEqual(envStatus, 1, envOutput)
        XCTAssertTrue(
            envOutput.contains("SHIFTWORK_DENY_SOURCE_NETWORKS 10.0.0.0/33: '10.0.0.0/33' is not a network"), envOutput)
    }
}
