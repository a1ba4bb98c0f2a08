import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// What a worker process writes about its tasks: every line names the task (`batch`, `task`, `attempt`,
/// `kind`, and `source` for a download at debug), from receipt to the result sent; per-task lines are
/// debug, failures info, so that info stays quiet.
final class WorkerLoggingTests: ClusterTestCase {
    /// One image that downloads and one that is missing, as URLs of the test server.
    private func sources(prefix: String) throws -> (good: String, missing: String) {
        let bytes = try SyntheticImages.make(width: 64, height: 48, format: .png, seed: 7)
        server.serve(path: "/\(prefix)/good.png", body: bytes, contentType: ImageFormat.png.mediaType)
        return (server.url("/\(prefix)/good.png"), server.url("/\(prefix)/missing.png"))
    }

    /// Submits `urls`, waits for the batch to end and returns its ID.
    private func submit(_ urls: [String], endpoint: String) async throws -> String {
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint])
        XCTAssertEqual(status, 1, "one item is missing:\n\(output)")
        let line = output.split(separator: "\n").first { $0.hasPrefix("batch b-") }
        let batchID = try XCTUnwrap(line?.split(separator: " ")[1].dropLast(), "no batch ID:\n\(output)")
        return String(batchID)
    }

    /// The lines of `output` written about `taskID`.
    private func lines(about taskID: String, in output: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.contains(" task=\(taskID) ") }
    }

    func testAtDebugEveryLineAboutATaskCarriesItsMetadataFromReceiptToResult() async throws {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", "2", "--worker-id", "logged",
                "--log-level", "debug", "--coordinator", endpoint,
            ])
        let (good, missing) = try sources(prefix: "debug")
        let batchID = try await submit([good, missing], endpoint: endpoint)
        // The worker logs a result once it has sent it: its last lines may come after the batch ends.
        for task in ["\(batchID)/0/tilt-shift", "\(batchID)/1/download"] {
            let last = await worker.waitForLine(timeout: .seconds(10)) {
                $0.contains(" task=\(task) ") && $0.contains(", result sent")
            }
            XCTAssertNotNil(last, "no result logged for \(task):\n\(worker.outputText)")
        }
        let output = worker.outputText

        let download = lines(about: "\(batchID)/0/download", in: output)
        XCTAssertEqual(download.filter { $0.hasSuffix("] task received") }.count, 1, output)
        XCTAssertEqual(download.filter { $0.hasSuffix("] task started") }.count, 1, output)
        XCTAssertEqual(download.filter { $0.contains("] task succeeded, result sent") }.count, 1, output)
        for line in download {
            XCTAssertTrue(line.contains(" debug "), "per-task lines are debug: \(line)")
            for field in ["batch=\(batchID)", "attempt=1", "kind=download", "source=\(good)"] {
                XCTAssertTrue(line.contains(" \(field) ") || line.contains(": \(field) "), "no \(field) in: \(line)")
            }
        }

        let tiltShift = lines(about: "\(batchID)/0/tilt-shift", in: output)
        XCTAssertEqual(tiltShift.last.map { $0.contains("] task succeeded, result sent") }, true, output)
        for line in tiltShift {
            for field in ["batch=\(batchID)", "attempt=1", "kind=tilt-shift"] {
                XCTAssertTrue(line.contains(" \(field) ") || line.contains(": \(field) "), "no \(field) in: \(line)")
            }
            XCTAssertFalse(line.contains(" source="), "only downloads carry their source: \(line)")
        }

        let failed = lines(about: "\(batchID)/1/download", in: output).filter {
            $0.contains("] task failed, result sent")
        }
        XCTAssertEqual(failed.count, 1, output)
        let failure = try XCTUnwrap(failed.first)
        XCTAssertTrue(failure.contains(" info "), "a failure is info: \(failure)")
        XCTAssertTrue(failure.contains(" code=download "), String(failure))
        XCTAssertTrue(
            failure.contains(" error=") && failure.contains("404"), "the failure carries its error: \(failure)")
        XCTAssertTrue(failure.contains(" source=\(missing) "), String(failure))
    }

    func testAtInfoOnlyFailuresAreLoggedAndTheyStillNameTheirTask() async throws {
        let endpoint = try await harness.startCoordinator()
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", "2", "--worker-id", "quiet",
                "--log-level", "info", "--coordinator", endpoint,
            ])
        let (good, missing) = try sources(prefix: "info")
        let batchID = try await submit([good, missing], endpoint: endpoint)
        // The worker logs a result once it has sent it: its line may come after the batch ends.
        let logged = await worker.waitForLine(timeout: .seconds(10)) { $0.contains("] task failed, result sent") }
        XCTAssertNotNil(logged, worker.outputText)
        let output = worker.outputText

        let taskLines = output.split(separator: "\n").filter { $0.contains(" task=") }
        XCTAssertEqual(taskLines.count, 1, "only the failure is logged at info:\n\(output)")
        let failure = try XCTUnwrap(taskLines.first)
        XCTAssertTrue(failure.contains("] task failed, result sent"), String(failure))
        for field in ["batch=\(batchID)", "task=\(batchID)/1/download", "attempt=1", "kind=download", "code=download"] {
            XCTAssertTrue(
                failure.contains(" \(field) ") || failure.contains(": \(field) "), "no \(field) in: \(failure)")
        }
        XCTAssertFalse(failure.contains(" source="), "the source is debug metadata: \(failure)")
        XCTAssertTrue(failure.contains(missing), "the error message names the input: \(failure)")
    }
}
