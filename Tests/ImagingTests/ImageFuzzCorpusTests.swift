import Foundation
import XCTest

@testable import Imaging

/// The seeds of the image fuzz target (Fuzz/Sources/ImageFuzzer, `scripts/fuzz`), committed under Fuzz/corpus/images:
/// they start the fuzzer at every format Imaging reads, so each file must be recognised, every format must have a
/// seed, and each seed must decode (but `rle8-refused.bmp`, refused with its message, as the fuzzer expects of bad
/// input). Made once by the tests' own writers (InputFormatSamples: libtiff, giflib, libheif) and Python for BMP.
final class ImageFuzzCorpusTests: XCTestCase {
    private static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus/images")
    }

    func testEveryFormatReadHasASeedThatDecodes() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        var formats: Set<ImageFormat> = []
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent(name)))
            let format = try XCTUnwrap(ImageFormat(sniffing: bytes), "\(name) is not recognised")
            formats.insert(format)
            if name.hasSuffix("-refused.bmp") {
                XCTAssertThrowsError(try ImageCodec.decode(bytes), name)
            } else {
                XCTAssertNoThrow(try ImageCodec.decode(bytes), name)
            }
        }
        XCTAssertEqual(
            formats, Set(ImageFormat.allCases).subtracting([.webp, .avif]),
            "a seed of every format read (WebP and AVIF are left to their own tests)")
    }
}
