import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// End to end over real processes: a coordinator and two workers on loopback TCP, images served by a
/// real HTTP server on 127.0.0.1, a batch submitted through the `shiftwork` CLI.
final class ClusterProcessTests: XCTestCase {
    private var harness: ClusterHarness!

    override func setUp() async throws {
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        await harness.stopAll()
    }

    func testBatchOfJPEGsAndPNGsThroughCoordinatorAndTwoWorkers() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        var expected: [(url: String, width: Int, height: Int, format: ImageFormat)] = []
        for index in 0..<6 {
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let (width, height) = (160 + 16 * index, 120 + 8 * index)
            let bytes = try SyntheticImages.make(width: width, height: height, format: format, seed: UInt64(index))
            let path = "/images/photo-\(index).\(format.fileExtension)"
            server.serve(path: path, body: bytes, contentType: format.mediaType)
            expected.append((server.url(path), width, height, format))
        }

        let endpoint = try await harness.startCoordinator()
        for index in 1...2 {
            // One worker finds the coordinator through the environment, as in a container.
            _ = try harness.launch(
                "worker-\(index)", ["worker", "--slots", "2", "--worker-id", "test-worker-\(index)"],
                environment: ["SHIFTWORK_COORDINATOR": endpoint])
        }
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit"] + expected.map(\.url) + ["--out", out.path, "--coordinator", endpoint], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "submit failed:\n\(harness.allOutput)")

        for (index, item) in expected.enumerated() {
            let file = out.appendingPathComponent("photo-\(index).\(item.format.fileExtension)")
            let data = try XCTUnwrap(
                FileManager.default.contents(atPath: file.path), "missing \(file.path):\n\(output)")
            let (image, format) = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(format, item.format, file.lastPathComponent)
            XCTAssertEqual(image.width, item.width, file.lastPathComponent)
            XCTAssertEqual(image.height, item.height, file.lastPathComponent)
        }
        XCTAssertTrue(output.contains("6 items: 6 succeeded, 0 failed"), output)
    }

    func testSubmitWithoutACoordinatorSaysWhereItTriedAndWhatToDo() async throws {
        let (status, output) = try await harness.run(
            [
                "submit", "http://127.0.0.1:9/x.jpg", "--out", harness.scratch.path,
                "--coordinator", "tcp://127.0.0.1:9", "--timeout", "1",
            ], timeout: .seconds(30))
        XCTAssertEqual(status, 1)
        XCTAssertTrue(output.contains("no answer from a coordinator at tcp://127.0.0.1:9"), output)
        XCTAssertTrue(output.contains("shiftwork coordinator --listen"), output)
    }
}
