import CImageCodecs
import XCTest

/// libavif is opened on the first AVIF decode or encode (Sources/CImageCodecs/avif_library.c), not linked:
/// when it cannot be opened, or is not libavif, the message names libavif, what was tried and the package.
final class AVIFLibraryTests: XCTestCase {
    private func probe(_ soname: String?) -> (loaded: Bool, message: String) {
        var error = [CChar](repeating: 0, count: 1024)
        let loaded = sw_avif_probe(soname, &error, error.count) == 1
        return (loaded, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    func testAMissingLibraryIsNamedWithThePackageToInstall() {
        let missing = probe("libavif-shiftwork-absent.so.15")
        XCTAssertFalse(missing.loaded)
        XCTAssertTrue(missing.message.hasPrefix("libavif could not be loaded"), missing.message)
        XCTAssertTrue(missing.message.contains("libavif-shiftwork-absent.so.15"), "the name tried: \(missing.message)")
        XCTAssertTrue(missing.message.contains("apt-get install libavif"), "the package: \(missing.message)")
    }

    func testALibraryWithoutLibavifsFunctionsIsRefused() {
        let wrong = probe("libz.so.1")
        XCTAssertFalse(wrong.loaded)
        XCTAssertTrue(wrong.message.contains("libavif was loaded but has no function avifVersion"), wrong.message)
    }

    func testTheRealLibraryLoads() {
        let real = probe(nil)
        XCTAssertTrue(real.loaded, real.message)
    }
}
