import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `--sink DIR` over real processes: the workers write the outputs into the shared directory themselves;
/// the coordinator and the client see only their metadata, and a sink the workers cannot use fails its
/// items (naming the sink), never the worker.
final class DirectorySinkTests: ClusterTestCase {
    func testWorkersWriteIntoTheSinkAndOnlyMetadataCrossesTheCoordinator() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        for name in ["a", "b"] {
            _ = try harness.launch(name, ["worker", "--slots", "2", "--worker-id", name, "--coordinator", endpoint])
        }
        let urls = try server.serveSyntheticImages(4, prefix: "sunk")
        let sink = harness.scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let out = harness.scratch.appendingPathComponent("not-used")
        let (status, output) = try await harness.run(
            ["submit"] + urls + [
                "--sink", sink.path, "--out", out.path,
                "--coordinator", endpoint,
            ])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("4 outputs were written by the workers into the sink"), output)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: out.path), "the client must not write outputs of a sink batch")
        let files = try FileManager.default.contentsOfDirectory(atPath: sink.path).sorted()
        XCTAssertEqual(files.count, 4, "\(files)")
        XCTAssertTrue(files.allSatisfy { !$0.hasPrefix(".") }, "no temporary file may be left behind: \(files)")
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: sink.appendingPathComponent(file)))
            XCTAssertEqual(try ImageCodec.decode(bytes).image.width, 120, file)
            XCTAssertTrue(
                output.contains(sink.appendingPathComponent(file).path),
                "the summary says where \(file) went:\n\(output)")
        }
        let page = try await TestHTTPClient.get(metricsURL).text
        XCTAssertEqual(MetricsPage.value("shiftwork_download_bytes_received_total", in: page), 0, page)
        XCTAssertEqual(MetricsPage.value("shiftwork_output_bytes_received_total", in: page), 0, page)

        // `status BATCH` and `results BATCH` list where each output went.
        let batchID = try XCTUnwrap(
            output.split(separator: "\n").first { $0.hasPrefix("batch ") }?
                .split(separator: " ")[1].dropLast().description, output)
        let (statusCode, statusText) = try await harness.run(["status", batchID, "--coordinator", endpoint])
        XCTAssertEqual(statusCode, 0, statusText)
        let (resultsCode, resultsText) = try await harness.run(["results", batchID, "--coordinator", endpoint])
        XCTAssertEqual(resultsCode, 0, resultsText)
        for file in files {
            XCTAssertTrue(statusText.contains("→ " + sink.appendingPathComponent(file).path), statusText)
            XCTAssertTrue(resultsText.contains(sink.appendingPathComponent(file).path), resultsText)
        }

        // A second batch into the same sink replaces nothing: its outputs take free names.
        let (again, againOutput) = try await harness.run([
            "submit", urls[0], "--sink", sink.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(again, 0, againOutput)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sink.path).count, 5)
    }

    func testASinkTheWorkersCannotReachFailsItsItemsNamingItAndTheWorkerGoesOn() async throws {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch("worker", ["worker", "--coordinator", endpoint])
        let urls = try server.serveSyntheticImages(2, prefix: "unsunk")
        let missing = harness.scratch.appendingPathComponent("not-mounted")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--sink", missing.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("sink \(missing.path): no such directory"), output)
        XCTAssertTrue(output.contains("2 failed"), output)
        // The worker survived and serves the next batch.
        let out = harness.scratch.appendingPathComponent("after")
        let (next, nextOutput) = try await harness.run([
            "submit", urls[0], "--out", out.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(next, 0, "\(nextOutput)\n\(worker.outputText)")
    }
}
