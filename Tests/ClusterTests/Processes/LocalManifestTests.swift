import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// `shiftwork submit LIST` where LIST is a text list of images on the client's own disk: the client reads it
/// (the workers cannot) and uploads the photos it names; a list that is not one is refused before anything is
/// sent, naming the line. Real coordinator, worker and client processes, loopback only.
final class LocalManifestTests: ClusterTestCase {
    /// A JPEG `width` pixels wide at `path` below the scratch folder `photos`.
    private func photo(_ path: String, width: Int) throws {
        let url = harness.scratch.appendingPathComponent("photos").appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(try SyntheticImages.make(width: width, height: 30, format: .jpeg, seed: UInt64(width))).write(to: url)
    }

    private func write(_ text: String, to path: String) throws -> URL {
        let url = harness.scratch.appendingPathComponent("photos").appendingPathComponent(path)
        try Data(text.utf8).write(to: url)
        return url
    }

    func testALocalListIsReadByTheClientAndItsPhotosUploadedKeepingTheirFolders() async throws {
        try photo("a.jpg", width: 41)
        try photo("trip/b.jpg", width: 42)
        try photo("trip/c.jpg", width: 43)
        try photo("left-out.jpg", width: 44)
        _ = try write("c.jpg\n", to: "trip/more.list")
        let list = try write("# picked for the album\na.jpg\ntrip/b.jpg\n\ntrip/more.list\n", to: "picked.txt")
        let endpoint = try await harness.startCoordinator()
        // No --allow-local-files and a working directory of its own: the worker reads nothing of the client's disk.
        let elsewhere = harness.scratch.appendingPathComponent("worker-cwd")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let worker = try ManagedProcess(
            "worker", executable: ShiftworkBinary.url,
            arguments: ["worker", "--slots", "2", "--worker-id", "list-worker", "--coordinator", endpoint],
            currentDirectory: elsewhere)
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit", list.path, "--out", out.path, "--coordinator", endpoint], timeout: .seconds(120))
        XCTAssertEqual(status, 0, "\(output)\n\(worker.outputText)")
        XCTAssertTrue(output.contains("3 items: 3 succeeded, 0 failed"), output)
        for (name, width) in [("a.jpg", 41), ("trip/b.jpg", 42), ("trip/c.jpg", 43)] {
            let bytes = [UInt8](try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(try ImageCodec.decode(bytes).image.width, width, name)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("left-out.jpg").path))
        _ = await worker.stop()
    }

    func testWithSharedDiskAWorkerReadsTheListAndTheBatchGrowsByIt() async throws {
        try photo("a.jpg", width: 41)
        try photo("trip/b.jpg", width: 42)
        let list = try write("a.jpg\ntrip/b.jpg\n", to: "picked.txt")
        let endpoint = try await harness.startCoordinator()
        try harness.launch(
            "shared-disk-worker",
            [
                "worker", "--slots", "2", "--worker-id", "shared-disk-worker", "--allow-local-files", "--coordinator",
                endpoint,
            ])
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run(
            ["submit", list.path, "--shared-disk", "--out", out.path, "--json", "--coordinator", endpoint],
            timeout: .seconds(120))
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        XCTAssertEqual(report.objects("items").count, 3, "the list and its two photos: \(output)")
        XCTAssertEqual(report.objects("items").compactMap { $0["manifest_items"] as? Int }, [2], output)
    }

    func testAListThatIsNotOneIsRefusedBeforeAnythingIsSentNamingTheLine() async throws {
        try photo("a.jpg", width: 41)
        let notes = try write("a.jpg\nremember to call Anna\n", to: "notes.txt")
        let endpoint = try await harness.startCoordinator()
        let (status, output) = try await harness.run(["submit", notes.path, "--coordinator", endpoint])
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("notes.txt is not a list of images: line 2 (remember to call Anna)"), output)
        let batches = try await harness.status(endpoint)
        XCTAssertEqual(batches.objects("batches").count, 0, "nothing was submitted")

        let deep = try write("d2.txt\n", to: "d1.txt")
        _ = try write("d3.txt\n", to: "d2.txt")
        _ = try write("a.jpg\n", to: "d3.txt")
        let (deepStatus, deepOutput) = try await harness.run(["submit", deep.path, "--coordinator", endpoint])
        XCTAssertNotEqual(deepStatus, 0, deepOutput)
        XCTAssertTrue(deepOutput.contains("nested deeper than 2 levels"), deepOutput)
    }
}
