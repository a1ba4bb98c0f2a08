import CCurl
import XCTest

/// libcurl is opened on first use (Sources/CCurl/curl_loader.c), not linked: when it cannot be opened, the
/// message names the library, the name tried and the Debian package to install; the real names load.
final class CurlLoaderTests: XCTestCase {
    private func probe(_ soname: String?) -> (loaded: Bool, message: String) {
        var error = [CChar](repeating: 0, count: 1024)
        let loaded = shiftwork_curl_probe(soname, &error, error.count) == 1
        return (loaded, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    func testAMissingLibraryIsNamedWithThePackageToInstall() {
        let missing = probe("libcurl-shiftwork-absent.so.4")
        XCTAssertFalse(missing.loaded)
        XCTAssertTrue(missing.message.hasPrefix("libcurl could not be loaded"), missing.message)
        XCTAssertTrue(missing.message.contains("libcurl-shiftwork-absent.so.4"), "the name tried: \(missing.message)")
        XCTAssertTrue(missing.message.contains("apt-get install libcurl4"), "the package: \(missing.message)")
    }

    func testALibraryWithoutLibcurlsFunctionsIsRefused() {
        // libz is a real library that loads, but it is not libcurl.
        let wrong = probe("libz.so.1")
        XCTAssertFalse(wrong.loaded)
        XCTAssertTrue(wrong.message.contains("libcurl was loaded but has no function curl_version_info"), wrong.message)
    }

    func testTheRealLibraryLoadsAndTheProcessHasIt() {
        let real = probe(nil)
        XCTAssertTrue(real.loaded, real.message)
        XCTAssertNil(shiftwork_curl_load_failure().map { String(cString: $0) })
        // The SHA-256 of "abc" (FIPS 180-2's first example), through the lazily loaded libcrypto.
        var digest = [UInt8](repeating: 0, count: 32)
        shiftwork_sha256(Array("abc".utf8), 3, &digest)
        XCTAssertEqual(digest.map { String(format: "%02x", $0) }.joined(),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
