import CMicroHTTPD
import XCTest

/// libmicrohttpd is opened by the first server's start (Sources/CMicroHTTPD/mhd_loader.c), not linked: when
/// it cannot be opened, the message names the library, the name tried and the Debian package to install.
final class MicroHTTPDLoaderTests: XCTestCase {
    private func probe(_ soname: String?) -> (loaded: Bool, message: String) {
        var error = [CChar](repeating: 0, count: 1024)
        let loaded = shiftwork_mhd_probe(soname, &error, error.count) == 1
        return (loaded, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    func testAMissingLibraryIsNamedWithThePackageToInstall() {
        let missing = probe("libmicrohttpd-shiftwork-absent.so.12")
        XCTAssertFalse(missing.loaded)
        XCTAssertTrue(missing.message.hasPrefix("libmicrohttpd could not be loaded"), missing.message)
        XCTAssertTrue(missing.message.contains("libmicrohttpd-shiftwork-absent.so.12"), "the name tried: \(missing.message)")
        XCTAssertTrue(missing.message.contains("apt-get install libmicrohttpd12"), "the package: \(missing.message)")
    }

    func testALibraryWithoutItsFunctionsIsRefused() {
        let wrong = probe("libz.so.1")
        XCTAssertFalse(wrong.loaded)
        XCTAssertTrue(wrong.message.contains("libmicrohttpd was loaded but has no function MHD_get_version"), wrong.message)
    }

    func testTheRealLibraryLoads() {
        let real = probe(nil)
        XCTAssertTrue(real.loaded, real.message)
    }
}
