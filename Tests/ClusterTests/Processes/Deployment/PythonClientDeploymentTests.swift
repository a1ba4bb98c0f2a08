import Foundation
import ShiftworkTestSupport
import XCTest

/// The example of the Python client package (clients/python/examples/submit.py, on `shiftwork_client`),
/// run by the venv's Python (scripts/setup-python) against a coordinator and a worker on loopback TCP:
/// proof that the protocol is usable from another language, and that the example the package's README
/// shows works. The package's own tests are clients/python/tests (scripts/test-python-client).
final class PythonClientDeploymentTests: DeploymentTestCase {
    private let client = Repository.file("clients/python/examples/submit.py")

    /// Starts a coordinator and one worker; returns the coordinator's endpoint.
    private func startCluster() async throws -> String {
        let endpoint = try await startCoordinator()
        _ = try launch(
            "worker", ["worker", "--slots", "2", "--worker-id", "python-test-worker"],
            environment: ["SHIFTWORK_COORDINATOR": endpoint])
        return endpoint
    }

    private func runClient(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let python = try await PythonEnvironment.shared.python()
        let process = try launch("python client", [client.path] + arguments, executable: python)
        let status = await process.waitForExit(timeout: .seconds(120))
        return (status, process.outputText)
    }

    func testPythonClientSubmitsTwoImagesAndReadsStatus() async throws {
        let endpoint = try await startCluster()
        let images = try serveImages(2)
        let out = scratch.appendingPathComponent("out")
        let (status, output) = try await runClient(["--coordinator", endpoint, "--out", out.path] + images.map(\.url))
        XCTAssertEqual(status, 0, "the Python client failed:\n\(output)\n\(allOutput)")

        let accepted = try XCTUnwrap(
            output.firstMatch(of: try Regex(#"batch (b-[0-9a-f]+) accepted: 2 items"#)),
            "no batch ID in the client's output:\n\(output)")
        let batchID = String(accepted.output[1].substring ?? "")
        for (index, image) in images.enumerated() {
            let written = out.appendingPathComponent("\(image.stem).\(image.format.fileExtension)").path
            XCTAssertTrue(
                output.contains(
                    "item \(index) ok \(image.url) -> \(written) (\(image.width)x\(image.height) \(image.format.mediaType),"
                ),
                "item \(index) is not reported as written to \(written):\n\(output)")
            XCTAssertTrue(
                output.contains("  item \(index) succeeded \(image.url)"), "no status for item \(index):\n\(output)")
            assertOutput(of: image, in: out, output)
        }
        XCTAssertTrue(output.contains("batch \(batchID) finished: 2 succeeded, 0 failed, 0 cancelled"), output)
        XCTAssertTrue(output.contains("status \(batchID): 2 items, 2 succeeded, 0 failed, 0 cancelled"), output)
        XCTAssertTrue(output.contains("cluster: 1 workers, 0 queued tasks, 0 running tasks"), output)

        // The ID the Python client printed is the coordinator's: the Swift CLI finds the same batch.
        let (cliStatus, cliOutput) = try await runToCompletion(
            "status", ShiftworkBinary.url, ["status", batchID, "--json", "--coordinator", endpoint])
        XCTAssertEqual(cliStatus, 0, cliOutput)
        let batch = try ClusterStatus(json: cliOutput).batches.first
        XCTAssertEqual(batch?.id, batchID, cliOutput)
        XCTAssertEqual(batch?.succeeded, 2, cliOutput)
    }

    func testPythonClientReportsAFailedItemWithItsCause() async throws {
        let endpoint = try await startCluster()
        let images = try serveImages(1)
        let missing = try XCTUnwrap(server).url("/images/missing.jpg")
        let out = scratch.appendingPathComponent("out")
        let (status, output) = try await runClient([
            "--coordinator", endpoint, "--out", out.path, images[0].url, missing,
        ])
        XCTAssertEqual(status, 1, "a batch with a failed item must exit with 1:\n\(output)\n\(allOutput)")
        XCTAssertTrue(output.contains("item 0 ok \(images[0].url)"), output)
        XCTAssertTrue(output.contains("item 1 failed \(missing): FAILURE_CODE_DOWNLOAD: "), output)
        XCTAssertTrue(output.contains(": 2 items, 1 succeeded, 1 failed, 0 cancelled"), output)
        XCTAssertTrue(output.contains("  item 1 failed \(missing)"), output)
        assertOutput(of: images[0], in: out, output)
    }

    func testPythonClientFollowsAManifest() async throws {
        let endpoint = try await startCluster()
        let images = try serveImages(2)
        let server = try XCTUnwrap(server)
        server.serve(
            path: "/images/list.txt", body: Array(images.map(\.url).joined(separator: "\n").utf8),
            contentType: "text/plain")
        let out = scratch.appendingPathComponent("out")
        let (status, output) = try await runClient([
            "--coordinator", endpoint, "--out", out.path, server.url("/images/list.txt"),
        ])
        XCTAssertEqual(status, 0, "the Python client failed on a manifest:\n\(output)\n\(allOutput)")
        XCTAssertTrue(output.contains("item 0 is a manifest: 2 items added"), output)
        XCTAssertTrue(output.contains("item 0 ok \(server.url("/images/list.txt")): a manifest, expanded"), output)
        for image in images { assertOutput(of: image, in: out, output) }
    }

    func testPythonClientWithCurveKeysIsServedAndAnUnlistedOneIsNot() async throws {
        let keys = try await TestKeys(in: scratch, allowed: ["worker", "python"], unlisted: ["stranger"])
        let endpoint = try await startCoordinator(keys: keys)
        _ = try launch("worker", ["worker", "--slots", "2", "--coordinator", endpoint] + keys.peerArguments("worker"))
        let images = try serveImages(1)
        let out = scratch.appendingPathComponent("out")
        let (status, output) = try await runClient([
            "--coordinator", endpoint, "--out", out.path, images[0].url,
            "--secret-key", keys.secretKey("python"), "--coordinator-key", keys.publicKey("coordinator"),
        ])
        XCTAssertEqual(status, 0, "the Python client with keys failed:\n\(output)\n\(allOutput)")
        assertOutput(of: images[0], in: out, output)

        let (refused, refusedOutput) = try await runClient([
            "--coordinator", endpoint, "--out", out.path, "--timeout", "2", images[0].url,
            "--secret-key", keys.secretKey("stranger"), "--coordinator-key", keys.publicKey("coordinator"),
        ])
        XCTAssertEqual(refused, 2, refusedOutput)
        XCTAssertTrue(refusedOutput.contains("refused this client's CurveZMQ key"), refusedOutput)
    }

    func testPythonClientWithoutACoordinatorSaysSo() async throws {
        let port = try freeLoopbackPort()
        let (status, output) = try await runClient([
            "--coordinator", "tcp://127.0.0.1:\(port)", "--timeout", "1",
            "http://127.0.0.1:\(port)/a.jpg",
        ])
        XCTAssertEqual(status, 2, output)
        XCTAssertTrue(
            output.contains("no answer to the batch from a coordinator at tcp://127.0.0.1:\(port) within 1 s"), output)
    }
}
