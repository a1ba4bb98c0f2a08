import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A second batch into the same `--out` directory never replaces the first one's files unless told to.
final class OutputOverwriteTests: ClusterTestCase {
    func testASecondRunTakesAFreeNameAndSaysSoAndOverwriteReplaces() async throws {
        let images = harness.scratch.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        let input = images.appendingPathComponent("x.jpg")
        try Data(try SyntheticImages.make(width: 64, height: 48, format: .jpeg, seed: 7)).write(to: input)
        let out = harness.scratch.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // A file the user already has under the name the output wants.
        let mine = out.appendingPathComponent("x.jpg")
        try Data("my own file".utf8).write(to: mine)

        let (status, output) = try await harness.run(["run", input.path, "--out", out.path])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(try String(contentsOf: mine, encoding: .utf8), "my own file", "an existing file was overwritten")
        let renamed = out.appendingPathComponent("x-2.jpg")
        XCTAssertTrue(FileManager.default.fileExists(atPath: renamed.path), output)
        XCTAssertTrue(output.contains("x-2.jpg (\(mine.path) exists; --overwrite replaces it)"), output)
        XCTAssertTrue(output.contains("1 output took a new name"), output)

        let (jsonStatus, json) = try await harness.run(["run", input.path, "--out", out.path, "--json"])
        XCTAssertEqual(jsonStatus, 0, json)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let item = try XCTUnwrap((document["items"] as? [[String: Any]])?.first)
        XCTAssertEqual(item["output"] as? String, out.appendingPathComponent("x-3.jpg").path)
        XCTAssertEqual(item["existing_file_kept"] as? String, mine.path)

        let (overwriteStatus, overwriteOutput) = try await harness.run([
            "run", input.path, "--out", out.path, "--overwrite",
        ])
        XCTAssertEqual(overwriteStatus, 0, overwriteOutput)
        let replaced = [UInt8](try Data(contentsOf: mine))
        XCTAssertEqual(
            try ImageCodec.decode(replaced).image.width, 64, "--overwrite must replace x.jpg with the output")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [], "no temporary file may be left behind")
    }
}
