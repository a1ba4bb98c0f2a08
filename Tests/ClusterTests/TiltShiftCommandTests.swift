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
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-tiltshift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func tiltshift(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try ManagedProcess("tiltshift", executable: ShiftworkBinary.url, arguments: ["tiltshift"] + arguments)
        let status = await process.waitForExit(timeout: .seconds(60))
        return (status, process.outputText)
    }

    private func writeInput() throws -> String {
        let input = path("in.jpg")
        try Data(SyntheticImages.make(width: 300, height: 200, format: .jpeg, seed: 3)).write(to: URL(fileURLWithPath: input))
        return input
    }

    func testTheOutputFormatFollowsTheFileName() async throws {
        let input = try writeInput()
        for (name, format) in [("out.png", ImageFormat.png), ("out.jpeg", .jpeg), ("out.JPG", .jpeg), ("out.result", .jpeg)] {
            let (status, output) = try await tiltshift([input, path(name)])
            XCTAssertEqual(status, 0, output)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name))))
            XCTAssertEqual(ImageFormat(sniffing: bytes), format, name)
        }
        let (status, output) = try await tiltshift([input, path("forced.out"), "--format", "png"])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(ImageFormat(sniffing: try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("forced.out"))))), .png)
    }

    func testFormatsItCannotWriteAndContradictionsAreRefusedBeforeAnyWork() async throws {
        let input = try writeInput()
        let (webp, webpOutput) = try await tiltshift([input, path("out.webp")])
        XCTAssertNotEqual(webp, 0)
        XCTAssertTrue(webpOutput.contains("cannot write .webp images"), webpOutput)
        XCTAssertTrue(webpOutput.contains("jpeg, png"), webpOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.webp")))

        let (contradiction, output) = try await tiltshift([input, path("out.jpg"), "--format", "png"])
        XCTAssertNotEqual(contradiction, 0)
        XCTAssertTrue(output.contains("--format png contradicts the output name"), output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.jpg")))
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
