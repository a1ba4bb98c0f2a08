import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Batches that grow while they run: an input that is a manifest (a text list of images) expands into
/// more items once its download finishes. Real coordinator, workers and HTTP server on loopback.
final class ManifestBatchTests: ClusterTestCase {
    private func decodedImages(in directory: URL) throws -> [String: (width: Int, height: Int)] {
        var images: [String: (width: Int, height: Int)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let (image, _) = try ImageCodec.decode(
                [UInt8](try Data(contentsOf: directory.appendingPathComponent(name))))
            images[name] = (image.width, image.height)
        }
        return images
    }

    func testAManifestAndANestedManifestExpandTheBatchWhileItRuns() async throws {
        let endpoint = try await harness.startCoordinator()
        try harness.startWorker("worker-a", endpoint: endpoint, slots: 2)
        try harness.startWorker("worker-b", endpoint: endpoint, slots: 2)
        let images = try server.serveSyntheticImages(5, prefix: "pictures")
        // The outer manifest lists two images (one relative to it, one absolute) and an inner manifest.
        server.serve(
            path: "/pictures/inner.txt", body: Array("image-3.png\n\(images[4])\n".utf8), contentType: "text/plain")
        server.serve(
            path: "/pictures/outer.txt",
            body: Array("# two images and a list\nimage-1.png\n\(images[2])\ninner.txt\n".utf8),
            contentType: "text/plain")
        let out = harness.scratch.appendingPathComponent("grown")
        let (status, output) = try await harness.run(
            [
                "submit", server.url("/pictures/outer.txt"), images[0], "--out", out.path, "--json", "--coordinator",
                endpoint,
            ])
        XCTAssertEqual(status, 0, "\(output)\n\(harness.allOutput)")

        // Items: outer manifest, image-0, then image-1 and image-2 and the inner manifest, then image-3 and image-4.
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        let items = report.objects("items")
        XCTAssertEqual(items.count, 7, output)
        XCTAssertEqual(report.int("succeeded"), 7, output)
        XCTAssertEqual(
            items.filter { $0["manifest_items"] != nil }.map { $0.int("manifest_items") }.sorted(), [2, 3], output)
        let written = try decodedImages(in: out)
        XCTAssertEqual(written.count, 5, "one output per listed or submitted image: \(written.keys.sorted())")
        XCTAssertTrue(written.values.allSatisfy { $0.width == 120 && $0.height == 90 })
        for index in 0..<5 {
            XCTAssertEqual(
                server.requestCount(path: TestHTTPServer.syntheticImagePath(index, prefix: "pictures")), 1,
                "image \(index) is downloaded once")
        }

        let batchID = try XCTUnwrap(report["batch"] as? String)
        let batch = try await harness.status(endpoint, batch: batchID)
        XCTAssertEqual(batch.objects("batches").first?.int("items"), 7, "status counts the added items")
    }

    func testABrokenEntryFailsOnlyItsOwnItemAndTooDeepANestingFailsTheManifest() async throws {
        let endpoint = try await harness.startCoordinator()
        try harness.startWorker("worker", endpoint: endpoint, slots: 2)
        let images = try server.serveSyntheticImages(1, prefix: "mixed")
        server.serve(path: "/mixed/list.txt", body: Array("image-0.jpg\nmissing.jpg\n".utf8), contentType: "text/plain")
        // A manifest listing a manifest listing a manifest: the third level is refused.
        server.serve(path: "/deep/1.txt", body: Array("2.txt\n".utf8), contentType: "text/plain")
        server.serve(path: "/deep/2.txt", body: Array("3.txt\n".utf8), contentType: "text/plain")
        server.serve(path: "/deep/3.txt", body: Array(images[0].utf8), contentType: "text/plain")
        let out = harness.scratch.appendingPathComponent("mixed")
        let (status, output) = try await harness.run(
            [
                "submit", server.url("/mixed/list.txt"), server.url("/deep/1.txt"), "--out", out.path, "--json",
                "--coordinator", endpoint,
            ])
        XCTAssertEqual(status, 1, "a failed item is not a success:\n\(output)")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        let errors = report.objects("items").compactMap { $0["error"] as? String }
        XCTAssertEqual(errors.count, 2, output)
        XCTAssertTrue(errors.contains { $0.contains("missing.jpg") && $0.contains("404") }, output)
        XCTAssertTrue(errors.contains { $0.contains("3.txt") && $0.contains("nest") }, output)
        XCTAssertEqual(try decodedImages(in: out).count, 1, "the good entry was processed")
    }
}
