import Foundation
import ShiftworkTestSupport
import XCTest

/// The built `shiftwork` is not linked against the libraries that only one feature needs (libcurl and
/// OpenSSL's libcrypto for downloads, libavif for AVIF, libmicrohttpd for the HTTP endpoints): they are opened
/// on first use, so that no command pays their start. What every command needs stays linked.
final class LazyLibrariesTests: XCTestCase {
    func testTheBinaryDoesNotLinkTheLibrariesOpenedOnFirstUse() async throws {
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [ShiftworkBinary.url.path]
        let pipe = Pipe()
        ldd.standardOutput = pipe
        try ldd.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        XCTAssertEqual(ldd.terminationStatus, 0, output)
        let linked = output.split(separator: "\n").compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) }
        for always in ["libzmq.so.5", "libprotobuf-c.so.1", "libjpeg.so.62", "libpng16.so.16"] {
            XCTAssertTrue(linked.contains(always), "\(always) stays linked; ldd says:\n\(output)")
        }
        for lazy in ["libcurl", "libcrypto", "libavif", "libmicrohttpd", "libgnutls", "libaom", "libdav1d"] {
            XCTAssertFalse(linked.contains { $0.hasPrefix(lazy) }, "\(lazy) is opened on first use, not linked; ldd says:\n\(output)")
        }
    }
}
