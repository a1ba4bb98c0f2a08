import CCurl
import CImageCodecs
import CMicroHTTPD
import Foundation
import ShiftworkTestSupport
import XCTest

/// The libraries that only one feature needs (libcurl and OpenSSL's libcrypto for downloads, libavif for AVIF, libheif for HEIF, libtiff for TIFF,
/// libmicrohttpd for the HTTP endpoints) are opened on first use, not linked, so that no command pays their
/// start: the built `shiftwork` does not list them in `ldd`; each loader, given a name that does not exist or
/// a library that is not the one it wants, says which library failed and which Debian package to install; the
/// real ones load. (The features themselves are tested where they are: downloads, S3, AVIF, the endpoints.)
final class LazyLibrariesTests: XCTestCase {
    /// One loader: its probe (a name to try, or nil for the real names), the library's name in messages, the
    /// Debian package named, and the first function it looks up.
    private struct Loader {
        let probe: (UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>, Int) -> Int32
        let library: String
        let package: String
        let firstFunction: String

        func load(_ soname: String?) -> (loaded: Bool, message: String) {
            var error = [CChar](repeating: 0, count: 1024)
            let loaded = error.withUnsafeMutableBufferPointer { buffer in
                guard let start = buffer.baseAddress else { return false }
                if let soname { return soname.withCString { probe($0, start, buffer.count) } == 1 }
                return probe(nil, start, buffer.count) == 1
            }
            return (loaded, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    private let loaders = [
        Loader(
            probe: { shiftwork_curl_probe($0, $1, $2) }, library: "libcurl", package: "libcurl4",
            firstFunction: "curl_version_info"),
        Loader(
            probe: { sw_avif_probe($0, $1, $2) }, library: "libavif", package: "libavif", firstFunction: "avifVersion"),
        Loader(
            probe: { sw_heif_probe($0, $1, $2) }, library: "libheif", package: "libheif1",
            firstFunction: "heif_get_version"),
        Loader(
            probe: { sw_tiff_probe($0, $1, $2) }, library: "libtiff", package: "libtiff6",
            firstFunction: "TIFFGetVersion"),
        Loader(
            probe: { shiftwork_mhd_probe($0, $1, $2) }, library: "libmicrohttpd", package: "libmicrohttpd12",
            firstFunction: "MHD_get_version"),
    ]

    func testAMissingLibraryIsNamedWithThePackageToInstall() {
        for loader in loaders {
            let soname = "\(loader.library)-shiftwork-absent.so.1"
            let missing = loader.load(soname)
            XCTAssertFalse(missing.loaded, soname)
            XCTAssertTrue(missing.message.hasPrefix("\(loader.library) could not be loaded"), missing.message)
            XCTAssertTrue(missing.message.contains(soname), "the name tried: \(missing.message)")
            XCTAssertTrue(
                missing.message.contains("apt-get install \(loader.package)"), "the package: \(missing.message)")
        }
    }

    func testALibraryThatIsNotTheOneWantedIsRefused() {
        for loader in loaders {
            // libz is a real library that loads, but none of these.
            let wrong = loader.load("libz.so.1")
            XCTAssertFalse(wrong.loaded, loader.library)
            XCTAssertTrue(
                wrong.message.contains("\(loader.library) was loaded but has no function \(loader.firstFunction)"),
                wrong.message)
        }
    }

    func testTheRealLibrariesLoad() {
        for loader in loaders {
            let real = loader.load(nil)
            XCTAssertTrue(real.loaded, "\(loader.library): \(real.message)")
        }
        XCTAssertNil(shiftwork_curl_load_failure().map { String(cString: $0) })
        // The SHA-256 of "abc" (FIPS 180-2's first example), through the libcrypto loaded with libcurl.
        var digest = [UInt8](repeating: 0, count: 32)
        shiftwork_sha256(Array("abc".utf8), 3, &digest)
        XCTAssertEqual(
            digest.map { String(format: "%02x", $0) }.joined(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testTheBinaryDoesNotLinkTheLibrariesOpenedOnFirstUse() throws {
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [ShiftworkBinary.url.path]
        let pipe = Pipe()
        ldd.standardOutput = pipe
        try ldd.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        XCTAssertEqual(ldd.terminationStatus, 0, output)
        let linked = output.split(separator: "\n").compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
        for always in ["libzmq.so.5", "libprotobuf-c.so.1", "libjpeg.so.62", "libpng16.so.16"] {
            XCTAssertTrue(linked.contains(always), "\(always) stays linked; ldd says:\n\(output)")
        }
        for lazy in [
            "libcurl", "libcrypto", "libavif", "libmicrohttpd", "libgnutls", "libaom", "libdav1d", "libheif",
            "libde265",
            "libx265", "libtiff", "libLerc", "libjbig",
        ] {
            XCTAssertFalse(
                linked.contains { $0.hasPrefix(lazy) },
                "\(lazy) is opened on first use, not linked; ldd says:\n\(output)")
        }
    }
}
