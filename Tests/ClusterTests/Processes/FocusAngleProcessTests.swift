import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `--angle` and `--falloff` travel on the wire to the workers: `submit` through a coordinator and a worker
/// (real processes, the image from a real HTTP server) writes what the filter gives here with the same
/// recipe, and not the horizontal blend.
final class FocusAngleProcessTests: XCTestCase {
    private var harness: ClusterHarness!

    override func setUp() async throws {
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        await harness.stopAll()
    }

    func testSubmitWithAngleAndProgressiveFalloffReachesTheWorker() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let input = try SyntheticImages.make(width: 320, height: 200, format: .png, seed: 4)
        server.serve(path: "/street.png", body: input, contentType: "image/png")

        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch("worker", ["worker", "--slots", "1", "--coordinator", endpoint])
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            [
                "submit", server.url("/street.png"), "--out", out.path, "--coordinator", endpoint,
                "--angle", "120", "--falloff", "progressive", "--radius", "6",
            ], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "submit failed:\n\(harness.allOutput)")
        let file = out.appendingPathComponent("street.png")
        let data = try XCTUnwrap(FileManager.default.contents(atPath: file.path), "missing \(file.path):\n\(output)")
        let received = try PNGCodec.decode([UInt8](data))

        let recipe = TiltShiftParameters(blurRadius: 6, angle: 120, falloff: .progressive)
        let expected = try PNGCodec.decode(
            try TiltShiftPipeline.process(input, parameters: recipe, encoding: EncodingOptions()).data)
        XCTAssertEqual(received, expected, "the worker must filter with the angle and falloff submitted")
        let horizontal = try PNGCodec.decode(
            try TiltShiftPipeline.process(
                input, parameters: TiltShiftParameters(blurRadius: 6), encoding: EncodingOptions()
            ).data)
        XCTAssertNotEqual(received, horizontal)
    }
}
