import Foundation
import Runtime
import Wire
import XCTest

@testable import Cluster

/// The worker's side of a directory sink, without a cluster: checksums, names, whole files only.
final class DirectorySinkUnitTests: XCTestCase {
    private var directory: URL!
    private let threads = ComputeThreads(name: "sink test", count: 1)

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
        threads.shutdown()
    }

    func testCRC32CIsTheCastagnoliChecksum() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([]), 0)
    }

    func testAStoredOutputIsWholeUnderAFreeNameWithItsMetadata() async throws {
        let sink = try OutputSinks.make(directory.path, threads: threads)
        let bytes = [UInt8](repeating: 7, count: 100_000)
        let first = try await sink.store(bytes, name: "x.jpg", mediaType: "image/jpeg")
        let second = try await sink.store(bytes, name: "x.jpg", mediaType: "image/jpeg")
        XCTAssertEqual(first.location, directory.appendingPathComponent("x.jpg").path)
        XCTAssertEqual(second.location, directory.appendingPathComponent("x-2.jpg").path, "never replaced")
        XCTAssertEqual(first.size, 100_000)
        XCTAssertEqual(first.crc32c, CRC32C.checksum(bytes))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["x-2.jpg", "x.jpg"])
    }

    func testTheFileUnderItsNameHoldsTheBytesAndOthersMayReadIt() async throws {
        let sink = try OutputSinks.make(directory.path, threads: threads)
        let bytes = (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let stored = try await sink.store(bytes, name: "big.jpg", mediaType: "image/jpeg")
        XCTAssertEqual(try [UInt8](Data(contentsOf: URL(fileURLWithPath: stored.location))), bytes)
        let attributes = try FileManager.default.attributesOfItem(atPath: stored.location)
        let permissions = try XCTUnwrap(attributes[.posixPermissions] as? Int)
        XCTAssertEqual(permissions & 0o444, 0o444, "readable by every worker and reader of the shared volume")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory.path), ["big.jpg"],
            "no temporary file left beside it")
    }

    func testAPathThatIsAFileIsNoDirectory() async throws {
        let file = directory.appendingPathComponent("plain")
        try Data([1]).write(to: file)
        let sink = try OutputSinks.make(file.path, threads: threads)
        do {
            _ = try await sink.store([1, 2, 3], name: "x.jpg", mediaType: "image/jpeg")
            XCTFail("a file where the directory should be must fail")
        } catch let error as SinkError {
            XCTAssertTrue(error.description.hasPrefix("sink \(file.path): no such directory"), error.description)
        }
    }

    func testARelativeNameKeepsItsFoldersBelowTheSinkAndNeverLeavesIt() async throws {
        let sink = try OutputSinks.make(directory.path, threads: threads)
        let stored = try await sink.store([1, 2, 3], name: "2024/01/IMG 0001 é.jpg", mediaType: "image/jpeg")
        XCTAssertEqual(stored.location, directory.appendingPathComponent("2024/01/IMG 0001 é.jpg").path)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: stored.location)), Data([1, 2, 3]))
        let outside = directory.appendingPathComponent("outside")
        let sinkRoot = directory.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sinkRoot, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: sinkRoot.appendingPathComponent("2024"), withDestinationURL: outside)
        let linked = try OutputSinks.make(sinkRoot.path, threads: threads)
        for name in ["2024/x.jpg", "../x.jpg"] {
            do {
                _ = try await linked.store([1], name: name, mediaType: "image/jpeg")
                XCTFail("\(name) must be refused")
            } catch let error as SinkError {
                XCTAssertTrue(error.description.hasPrefix("sink \(sinkRoot.path): output name"), error.description)
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [])
    }

    func testAMissingDirectoryOrAHostileNameFailsNamingTheSink() async throws {
        let missing = directory.appendingPathComponent("nope").path
        let sink = try OutputSinks.make(missing, threads: threads)
        do {
            _ = try await sink.store([1, 2, 3], name: "x.jpg", mediaType: "image/jpeg")
            XCTFail("a missing directory must fail")
        } catch let error as SinkError {
            XCTAssertTrue(error.description.hasPrefix("sink \(missing): no such directory"), error.description)
        }
        for name in [
            "../escape", ".hidden", "", "a/../../b", "/etc/x", "nul\u{0}", "bell\u{7}", "a//b",
            String(repeating: "x", count: 10_000),
        ] {
            XCTAssertThrowsError(try OutputSinks.checkName(name, sink: "/s"), name.prefix(20).description)
        }
        XCTAssertNoThrow(try OutputSinks.checkName("photo-2", sink: "/s"))
        XCTAssertNoThrow(try OutputSinks.checkName("2024/01/my photo #1 (copy)", sink: "/s"))
        XCTAssertThrowsError(try OutputSinks.make("relative/dir", threads: threads))
    }
}
