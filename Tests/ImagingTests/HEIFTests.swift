import XCTest

@testable import Imaging

/// HEIF/HEIC input (libheif, opened on first use): a HEIC decodes close to what was encoded, with alpha, its ICC
/// profile and EXIF; it is written as JPEG unless another format is chosen; a header that lies about the size is
/// refused by the limits, a truncated file fails with a message.
final class HEIFTests: XCTestCase {
    private typealias S = InputFormatSamples

    func testAHEICDecodesCloseToWhatWasEncoded() throws {
        let original = TestImages.pattern(width: 96, height: 64, channels: 3)
        let data = try S.heic(original)
        XCTAssertEqual(ImageFormat(sniffing: data), .heif)
        let (image, format) = try ImageCodec.decode(data)
        XCTAssertEqual(format, .heif)
        XCTAssertEqual([image.width, image.height, image.channels], [96, 64, 3])
        XCTAssertGreaterThan(TestImages.psnr(original, image), 35)
        let rgba = TestImages.pattern(width: 64, height: 48, channels: 4)
        let decodedRGBA = try ImageCodec.decode(try S.heic(rgba)).image
        XCTAssertEqual(decodedRGBA.channels, 4)
        XCTAssertGreaterThan(TestImages.psnr(rgba, decodedRGBA), 35)
    }

    func testTheProfileAndEXIFTravelIntoTheJPEGItIsWrittenAs() throws {
        let profile = MetadataTests.adobeRGBProfile()
        let data = try S.heic(
            TestImages.pattern(width: 64, height: 48, channels: 3), icc: profile,
            exif: MetadataTests.exif(orientation: 1))
        let result = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(result.format, .jpeg)
        XCTAssertTrue(result.warnings.contains { $0.hasPrefix("HEIF input written as JPEG") }, "\(result.warnings)")
        let carried = try MetadataTests.metadata(of: result.data)
        XCTAssertEqual(carried.icc, profile)
        XCTAssertFalse(carried.exif.isEmpty)
        let png = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions(format: .png))
        XCTAssertEqual(png.format, .png)
        XCTAssertEqual(png.warnings, [])
    }

    func testBadHEICsFailWithAMessage() throws {
        // 128 × 128: whole coding units, so that the file has one ispe box and no clean aperture (clap) over it.
        let data = try S.heic(TestImages.pattern(width: 128, height: 128, channels: 3))
        XCTAssertThrowsError(try ImageCodec.decode(Array(data.prefix(data.count / 2)))) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
            XCTAssertTrue("\(error)".contains("HEIF"), "\(error)")
        }
        // The image's spatial extent (ispe) set to 20000 × 20000: the limit refuses it before decoding.
        var lying = data
        guard let ispe = Self.find(Array("ispe".utf8), in: data) else { return XCTFail("no ispe box") }
        lying.replaceSubrange(ispe + 8..<ispe + 16, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        XCTAssertThrowsError(try ImageCodec.decode(lying)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(error)")
        }
        // A size that fits the limit but not the coded picture: the decode says so instead of reading past it.
        var small = data
        small.replaceSubrange(ispe + 8..<ispe + 16, with: [0, 0, 0, 200, 0, 0, 0, 100])
        XCTAssertThrowsError(try ImageCodec.decode(small)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
            XCTAssertTrue("\(error)".contains("its header says 200×100 but it decodes to 128×128"), "\(error)")
        }
        // Corrupt bytes anywhere decode or fail, never crash.
        for offset in stride(from: 0, to: data.count, by: max(1, data.count / 60)) {
            var corrupt = data
            corrupt[offset] ^= 0x5A
            do {
                _ = try ImageCodec.decode(corrupt)
            } catch let error as ImagingError {
                XCTAssertTrue([.decode, .limit].contains(error.kind), "\(error)")
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }
}
