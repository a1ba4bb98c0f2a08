import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `shiftwork tiltshift IN OUT`, the real binary: the output format follows OUT's name unless --format says
/// otherwise, contradictions and formats it cannot write are refused before any work, and the image streams
/// from file to file.
final class TiltShiftCommandTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shiftwork-tiltshift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func tiltshift(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try ManagedProcess(
            "tiltshift", executable: ShiftworkBinary.url, arguments: ["tiltshift"] + arguments)
        let status = await process.waitForExit(timeout: .seconds(60))
        return (status, process.outputText)
    }

    private func writeInput() throws -> String {
        let input = path("in.jpg")
        try Data(SyntheticImages.make(width: 300, height: 200, format: .jpeg, seed: 3)).write(
            to: URL(fileURLWithPath: input))
        return input
    }

    func testTheOutputFormatFollowsTheFileName() async throws {
        let input = try writeInput()
        for (name, format) in [
            ("out.png", ImageFormat.png), ("out.jpeg", .jpeg), ("out.JPG", .jpeg), ("out.result", .jpeg),
            ("out.webp", .webp), ("out.AVIF", .avif),
        ] {
            let (status, output) = try await tiltshift([input, path(name)])
            XCTAssertEqual(status, 0, output)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name))))
            XCTAssertEqual(ImageFormat(sniffing: bytes), format, name)
        }
        let (status, output) = try await tiltshift([input, path("forced.out"), "--format", "png"])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(
            ImageFormat(sniffing: try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("forced.out"))))), .png)
    }

    func testFormatsItCannotWriteAndContradictionsAreRefusedBeforeAnyWork() async throws {
        let input = try writeInput()
        let (gif, gifOutput) = try await tiltshift([input, path("out.gif")])
        XCTAssertNotEqual(gif, 0)
        XCTAssertTrue(gifOutput.contains("cannot write .gif images"), gifOutput)
        XCTAssertTrue(gifOutput.contains("jpeg, png, webp, avif"), gifOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.gif")))

        let (heic, heicOutput) = try await tiltshift([input, path("out.bin"), "--format", "heic"])
        XCTAssertNotEqual(heic, 0)
        XCTAssertTrue(
            heicOutput.contains("HEIF is read but not written: the output formats are jpeg, png, webp, avif, tiff"),
            heicOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.bin")))

        let (unknown, unknownOutput) = try await tiltshift([input, path("out.bin"), "--format", "jxl"])
        XCTAssertNotEqual(unknown, 0)
        XCTAssertTrue(
            unknownOutput.contains(
                "unknown output format 'jxl': the supported formats are jpeg, png, webp, avif, tiff"), unknownOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.bin")))

        let (webpAsAVIF, webpOutput) = try await tiltshift([input, path("out.webp"), "--format", "avif"])
        XCTAssertNotEqual(webpAsAVIF, 0)
        XCTAssertTrue(webpOutput.contains("--format avif contradicts the output name"), webpOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.webp")))

        let (pngQuality, pngOutput) = try await tiltshift([
            input, path("out.png"), "--format", "png", "--quality", "50",
        ])
        XCTAssertNotEqual(pngQuality, 0)
        XCTAssertTrue(pngOutput.contains("--quality applies to the lossy formats"), pngOutput)

        let (contradiction, output) = try await tiltshift([input, path("out.jpg"), "--format", "png"])
        XCTAssertNotEqual(contradiction, 0)
        XCTAssertTrue(output.contains("--format png contradicts the output name"), output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.jpg")))
    }

    /// `--angle` and `--falloff` (issue #32): a turned, progressive tilt-shift is written and differs from the
    /// horizontal one; an angle out of range or an unknown falloff is refused, saying what to give.
    func testAngleAndFalloffAreTakenAndCheckedBeforeAnyWork() async throws {
        let input = try writeInput()
        let (plain, plainOutput) = try await tiltshift([input, path("plain.png")])
        XCTAssertEqual(plain, 0, plainOutput)
        let (turned, turnedOutput) = try await tiltshift([
            input, path("turned.png"), "--angle", "30", "--falloff", "progressive",
        ])
        XCTAssertEqual(turned, 0, turnedOutput)
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: path("plain.png")))
        let turnedBytes = try Data(contentsOf: URL(fileURLWithPath: path("turned.png")))
        XCTAssertEqual(ImageFormat(sniffing: [UInt8](turnedBytes)), .png)
        XCTAssertNotEqual(plainBytes, turnedBytes)

        let (wide, wideOutput) = try await tiltshift([input, path("wide.png"), "--angle", "400"])
        XCTAssertNotEqual(wide, 0)
        XCTAssertTrue(wideOutput.contains("angle (degrees) must be between -360.0 and 360.0 (got 400.0)"), wideOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("wide.png")))

        let (unknown, unknownOutput) = try await tiltshift([input, path("unknown.png"), "--falloff", "gradual"])
        XCTAssertNotEqual(unknown, 0)
        XCTAssertTrue(unknownOutput.contains("blend") && unknownOutput.contains("progressive"), unknownOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("unknown.png")))
    }

    func testQualityAppliesToTheChosenLossyFormat() async throws {
        let input = try writeInput()
        var sizes: [String: Int] = [:]
        for format in ["webp", "avif", "jpg"] {
            for quality in ["20", "95"] {
                let name = "q\(quality).\(format)"
                let (status, output) = try await tiltshift([input, path(name), "--quality", quality])
                XCTAssertEqual(status, 0, output)
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name))))
                XCTAssertEqual(ImageFormat(sniffing: bytes), ImageFormat(name: format), name)
                sizes[name] = bytes.count
            }
            XCTAssertLessThan(sizes["q20.\(format)"] ?? 0, sizes["q95.\(format)"] ?? 0, "\(format): \(sizes)")
        }
        // A WebP input is read too, into another format.
        let (status, output) = try await tiltshift([path("q95.webp"), path("from-webp.png")])
        XCTAssertEqual(status, 0, output)
        let png = try PNGCodec.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: path("from-webp.png")))))
        XCTAssertEqual([png.width, png.height], [300, 200])
    }

    /// `--exact-blur` blurs at full resolution: the CLI's output with and without it is what the pipeline makes in
    /// process with `exactBlur` true and false (the default halves the plane at σ 10 on a 600×400 image), and
    /// the two differ.
    func testExactBlurSelectsTheFullResolutionBlur() async throws {
        let input = path("in.png")
        let data = try SyntheticImages.make(width: 600, height: 400, format: .png, seed: 5)
        try Data(data).write(to: URL(fileURLWithPath: input))
        var outputs: [[UInt8]] = []
        for exact in [false, true] {
            let name = exact ? "exact.png" : "halved.png"
            let (status, output) = try await tiltshift([input, path(name)] + (exact ? ["--exact-blur"] : []))
            XCTAssertEqual(status, 0, output)
            let written = try PNGCodec.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name)))))
            var timings = PipelineTimings()
            let expected = try TiltShiftPipeline.process(
                data, parameters: .coreImage, encoding: EncodingOptions(format: .png),
                exactBlur: exact, timings: &timings)
            XCTAssertEqual(written, try PNGCodec.decode(expected.data), "exact blur \(exact)")
            outputs.append(written.pixels)
        }
        XCTAssertNotEqual(outputs[0], outputs[1], "the halved and the full-resolution blur differ")
    }

    func testAnUnreadableInputLeavesNoOutputFile() async throws {
        let input = path("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 1, 2, 3]).write(to: URL(fileURLWithPath: input))
        let (status, output) = try await tiltshift([input, path("out.jpg")])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("cannot read JPEG"), output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.jpg")))
    }
}
