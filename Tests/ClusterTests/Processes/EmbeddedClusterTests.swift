import Cluster
import Foundation
import Imaging
import Logging
import ShiftworkTestSupport
import XCTest

/// The embedded default: coordinator, workers and client in this process over `inproc://`.
final class EmbeddedClusterTests: XCTestCase {
    func testBrokenInputsFailTheirOwnItemsOnly() async throws {
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let good = try SyntheticImages.make(width: 96, height: 64, format: .jpeg, seed: 1)
        server.serve(path: "/good.jpg", body: good, contentType: "image/jpeg")
        server.serve(path: "/page.jpg", body: Array("<!DOCTYPE html><html></html>".utf8), contentType: "text/html")
        server.serve(path: "/truncated.jpg", body: Array(good.prefix(good.count / 3)), contentType: "image/jpeg")
        let missing = server.url("/missing.jpg")

        let out = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shiftwork-embedded-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let submission = BatchSubmission(
            inputs: [server.url("/good.jpg"), server.url("/page.jpg"), missing, server.url("/truncated.jpg")],
            outputDirectory: out)
        let summary = try await EmbeddedCluster.run(workerCount: 2, slotsPerWorker: 2, logger: logger) { cluster in
            try await submission.run(with: cluster.client)
        }

        XCTAssertEqual(summary.items.count, 4)
        XCTAssertNil(summary.items[0].error)
        let written = try XCTUnwrap(summary.items[0].outputPath)
        let (image, _) = try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: written))))
        XCTAssertEqual(image.width, 96)
        XCTAssertEqual(image.height, 64)
        let pageError = try XCTUnwrap(summary.items[1].error)
        XCTAssertTrue(
            pageError.lowercased().contains("not a jpeg, png, webp, avif, heic/heif, tiff, gif or bmp image"), pageError
        )
        let missingError = try XCTUnwrap(summary.items[2].error)
        XCTAssertTrue(missingError.contains("404"), missingError)
        XCTAssertNotNil(summary.items[3].error, "a truncated JPEG must fail its item")
        XCTAssertEqual(summary.succeeded, 1)
        XCTAssertEqual(summary.failed, 3)
    }
}
