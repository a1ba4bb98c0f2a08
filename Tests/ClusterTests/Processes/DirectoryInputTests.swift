import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `shiftwork run DIR` and `shiftwork submit DIR`, the real binary: a directory becomes the images inside
/// it (recursively, in sorted order), and what is not an image is named in one line.
final class DirectoryInputTests: ClusterTestCase {
    /// A tree of three images (one in a subdirectory, one without an extension) and two files that are
    /// not images.
    private func makePhotos() throws -> URL {
        let photos = harness.scratch.appendingPathComponent("photos")
        let files: [(String, [UInt8])] = [
            ("b.png", try SyntheticImages.make(width: 40, height: 30, format: .png, seed: 1)),
            ("a.jpg", try SyntheticImages.make(width: 64, height: 48, format: .jpeg, seed: 2)),
            ("trip/c", try SyntheticImages.make(width: 32, height: 24, format: .jpeg, seed: 3)),
            ("notes.txt", Array("not an image\n".utf8)),
            ("trip/broken.jpg", Array("<html>".utf8)),
        ]
        for (name, bytes) in files {
            let url = photos.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        return photos
    }

    private func assertOutputs(in out: URL, _ output: String, file: StaticString = #filePath, line: UInt = #line) throws
    {
        // The directory's folders are kept: trip/c comes back as trip/c.jpg.
        for (name, width) in [("a.jpg", 64), ("b.png", 40), ("trip/c.jpg", 32)] {
            let bytes = [UInt8](try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(
                try ImageCodec.decode(bytes).image.width, width, "\(name):\n\(output)", file: file, line: line)
        }
    }

    func testRunOfADirectoryProcessesItsImagesAndNamesWhatItSkipped() async throws {
        let photos = try makePhotos()
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(["run", photos.path, "--out", out.path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(
            output.contains(
                "shiftwork: \(photos.path): skipped 2 files that are not images (JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP): notes.txt, trip/broken.jpg"
            ), output)
        XCTAssertTrue(output.contains("batch b-"), output)
        XCTAssertTrue(output.contains(": 3 items"), output)
        // Sorted order: a.jpg, b.png, then the subdirectory's image.
        let lines = output.split(separator: "\n").filter { $0.contains(" ok ") }
        XCTAssertEqual(lines.count, 3, output)
        for name in ["a.jpg", "b.png", "trip/c"] {
            XCTAssertTrue(output.contains("ok      \(photos.path)/\(name) -> "), "\(name) not processed:\n\(output)")
        }
        XCTAssertTrue(output.contains("3 items: 3 succeeded, 0 failed ("), output)
        try assertOutputs(in: out, output)
    }

    func testRunOfADirectoryWithoutImagesSaysSo() async throws {
        let empty = harness.scratch.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try Data("text".utf8).write(to: empty.appendingPathComponent("readme.txt"))
        let (status, output) = try await harness.run([
            "run", empty.path, "--out", harness.scratch.appendingPathComponent("out").path,
        ])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(
            output.contains(
                "no images to process: '\(empty.path)' holds no image file (JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP)"
            ), output)
        XCTAssertTrue(
            output.contains(
                "skipped 1 file that is not an image (JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP): readme.txt"),
            output)
    }

    func testSubmitOfADirectorySendsItsImagesToTheCluster() async throws {
        _ = try makePhotos()
        let endpoint = try await harness.startCoordinator()
        _ = try harness.launch(
            "worker",
            ["worker", "--slots", "2", "--worker-id", "dir-worker", "--allow-local-files", "--coordinator", endpoint])
        let out = harness.scratch.appendingPathComponent("out")
        // A relative directory is resolved against the working directory, as a path is.
        let process = try ManagedProcess(
            "submit", executable: ShiftworkBinary.url,
            arguments: ["submit", "photos", "--out", out.path, "--coordinator", endpoint],
            currentDirectory: harness.scratch)
        let status = await process.waitForExit(timeout: .seconds(120))
        if status == nil { await process.stop() }
        let output = process.outputText
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        XCTAssertTrue(output.contains("skipped 2 files that are not images"), output)
        XCTAssertTrue(output.contains("3 items: 3 succeeded, 0 failed ("), output)
        try assertOutputs(in: out, output)
    }
}
