import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// The output format, its quality and the colour policy travel on the wire to the workers: `submit --format webp`
/// through a coordinator and a worker (real processes, images from a real HTTP server) and `run --format avif`
/// (the embedded cluster). A broken ICC profile is a warning in the item's result, shown by submit and status,
/// not a failed item.
final class OutputFormatProcessTests: XCTestCase {
    private var harness: ClusterHarness!

    override func setUp() async throws {
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        await harness.stopAll()
    }

    /// `jpeg` with an APP2 ICC_PROFILE segment of garbage after its SOI marker.
    private func withBrokenProfile(_ jpeg: [UInt8]) -> [UInt8] {
        let garbage = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let payload = Array("ICC_PROFILE\0".utf8) + [1, 1] + garbage
        let length = payload.count + 2
        return Array(jpeg.prefix(2)) + [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
            + Array(jpeg.dropFirst(2))
    }

    func testSubmitWithFormatWebPWritesWebPAndReportsAProfileWarning() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let plain = try SyntheticImages.make(width: 320, height: 200, format: .png, seed: 1)
        let profiled = withBrokenProfile(try SyntheticImages.make(width: 240, height: 180, format: .jpeg, seed: 2))
        server.serve(path: "/plain.png", body: plain, contentType: "image/png")
        server.serve(path: "/profiled.jpg", body: profiled, contentType: "image/jpeg")

        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch("worker", ["worker", "--slots", "2", "--coordinator", endpoint])
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            [
                "submit", server.url("/plain.png"), server.url("/profiled.jpg"), "--out", out.path, "--coordinator",
                endpoint,
                "--format", "webp", "--quality", "70", "--colour", "srgb",
            ], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "submit failed:\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("2 items: 2 succeeded, 0 failed"), output)
        for (name, width, height) in [("plain", 320, 200), ("profiled", 240, 180)] {
            let file = out.appendingPathComponent("\(name).webp")
            let data = try XCTUnwrap(
                FileManager.default.contents(atPath: file.path), "missing \(file.path):\n\(output)")
            let (image, format) = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(format, .webp, name)
            XCTAssertEqual([image.width, image.height], [width, height], name)
        }
        XCTAssertTrue(output.contains("warning: ignored the embedded ICC profile"), output)

        let batch = try XCTUnwrap(output.firstMatch(of: /batch (b-[0-9a-f]+)/)?.1, output)
        let (statusExit, statusOutput) = try await harness.run(["status", String(batch), "--coordinator", endpoint])
        XCTAssertEqual(statusExit, 0, statusOutput)
        XCTAssertTrue(statusOutput.contains("warning: ignored the embedded ICC profile"), statusOutput)
    }

    func testRunWithFormatAVIFWritesAVIF() async throws {
        let input = harness.scratch.appendingPathComponent("photo.jpg")
        try Data(SyntheticImages.make(width: 200, height: 150, format: .jpeg, seed: 4)).write(to: input)
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run([
            "run", input.path, "--out", out.path, "--format", "avif", "--metadata", "strip",
        ])
        XCTAssertEqual(status, 0, output)
        let data = try XCTUnwrap(
            FileManager.default.contents(atPath: out.appendingPathComponent("photo.avif").path), output)
        let (image, format) = try ImageCodec.decode([UInt8](data))
        XCTAssertEqual(format, .avif)
        XCTAssertEqual([image.width, image.height], [200, 150])

        let (refused, refusal) = try await harness.run(["run", input.path, "--out", out.path, "--format", "gif"])
        XCTAssertNotEqual(refused, 0)
        XCTAssertTrue(
            refusal.contains("GIF is read but not written: the output formats are jpeg, png, webp, avif, tiff"), refusal
        )
        let (unknown, unknownOutput) = try await harness.run(["run", input.path, "--out", out.path, "--format", "jxl"])
        XCTAssertNotEqual(unknown, 0)
        XCTAssertTrue(unknownOutput.contains("unknown output format 'jxl'"), unknownOutput)
    }

    /// A directory of a TIFF and a BMP (recognised by their signatures, names without extensions): the TIFF is
    /// written as TIFF, the BMP, which is read but not written, as JPEG; `--format tiff` writes TIFF for both.
    func testRunReadsTIFFAndBMPAndWritesTIFF() async throws {
        let photos = harness.scratch.appendingPathComponent("scans")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let image = try ImageCodec.decode(SyntheticImages.make(width: 120, height: 90, format: .png, seed: 7)).image
        try Data(try ImageCodec.encode(image, options: EncodingOptions(format: .tiff))).write(
            to: photos.appendingPathComponent("scan"))
        // A 24-bit bottom-up BMP with a 40-byte header.
        func le32(_ v: Int) -> [UInt8] {
            [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)]
        }
        let stride = (120 * 3 + 3) / 4 * 4
        var bmp =
            Array("BM".utf8) + le32(54 + stride * 90) + le32(0) + le32(54) + le32(40) + le32(120) + le32(90) + [
                1, 0, 24, 0,
            ]
        bmp += le32(0) + le32(stride * 90) + le32(2835) + le32(2835) + le32(0) + le32(0)
        for y in (0..<90).reversed() {
            for x in 0..<120 { bmp += [image[x, y, 2], image[x, y, 1], image[x, y, 0]] }
            bmp += [UInt8](repeating: 0, count: stride - 360)
        }
        try Data(bmp).write(to: photos.appendingPathComponent("paint"))
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(["run", photos.path, "--out", out.path])
        XCTAssertEqual(status, 0, output)
        let tiff = try XCTUnwrap(
            FileManager.default.contents(atPath: out.appendingPathComponent("scan.tif").path), output)
        XCTAssertEqual(try ImageCodec.decode([UInt8](tiff)).format, .tiff)
        let jpeg = try XCTUnwrap(
            FileManager.default.contents(atPath: out.appendingPathComponent("paint.jpg").path), output)
        XCTAssertEqual(try ImageCodec.decode([UInt8](jpeg)).format, .jpeg)
        let both = harness.scratch.appendingPathComponent("both")
        let (tiffStatus, tiffOutput) = try await harness.run([
            "run", photos.path, "--out", both.path, "--format", "tiff",
        ])
        XCTAssertEqual(tiffStatus, 0, tiffOutput)
        for name in ["scan.tif", "paint.tif"] {
            let data = try XCTUnwrap(
                FileManager.default.contents(atPath: both.appendingPathComponent(name).path), tiffOutput)
            let decoded = try ImageCodec.decode([UInt8](data))
            XCTAssertEqual(decoded.format, .tiff)
            XCTAssertEqual([decoded.image.width, decoded.image.height], [120, 90])
        }
    }
}
