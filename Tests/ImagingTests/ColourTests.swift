import XCTest
@testable import Imaging

/// Colour policies (`EncodingOptions.colour`): profiles carried or converted to sRGB through LittleCMS;
/// broken profiles and CMYK without a profile are warned about, not failed.
final class ColourTests: XCTestCase {
    /// A flat image of one colour, as a JPEG (4:4:4 would be nicer; 4:2:0 is flat enough here) with `icc`.
    private func flatJPEG(_ rgb: [UInt8], icc: [UInt8]) throws -> [UInt8] {
        var image = ImageBuffer(width: 64, height: 48, channels: 3)
        for i in 0..<(64 * 48) { for c in 0..<3 { image.pixels[3 * i + c] = rgb[c] } }
        var metadata = ImageMetadata()
        metadata.icc = icc
        return try JPEGRowEncoder(width: 64, height: 48, channels: 3, quality: 98, metadata: metadata, destination: .memory)
            .encode(image, token: .never)
    }

    private func centre(_ data: [UInt8]) throws -> [Int] {
        let image = try ImageCodec.decode(data).image
        return (0..<3).map { Int(image[32, 24, $0]) }
    }

    private func icc(of data: [UInt8]) throws -> [UInt8] {
        try data.withUnsafeBufferPointer { try JPEGRowDecoder(.memory($0), limits: .default).metadata.icc }
    }

    func testAdobeRGBIsConvertedToSRGBOnRequestAndCarriedOtherwise() throws {
        let profile = MetadataTests.adobeRGBProfile()
        let jpeg = try flatJPEG([64, 160, 64], icc: profile)
        let kept = try TiltShiftPipeline.process(jpeg, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(try icc(of: kept.data), profile)
        XCTAssertTrue(kept.warnings.isEmpty, "\(kept.warnings)")
        let converted = try TiltShiftPipeline.process(jpeg, parameters: .coreImage, encoding: EncodingOptions(colour: .srgb))
        XCTAssertEqual(try icc(of: converted.data), [], "sRGB output carries no profile")
        let before = try centre(kept.data), after = try centre(converted.data)
        // Adobe RGB is wider than sRGB: the same green, written in sRGB numbers, is more saturated.
        XCTAssertGreaterThan(after[1] - after[0], before[1] - before[0] + 10, "\(before) -> \(after)")
        // A neutral stays neutral.
        let gray = try TiltShiftPipeline.process(try flatJPEG([128, 128, 128], icc: profile), parameters: .coreImage,
                                                 encoding: EncodingOptions(colour: .srgb))
        let g = try centre(gray.data)
        XCTAssertLessThanOrEqual((g.max() ?? 0) - (g.min() ?? 0), 2, "\(g)")
    }

    func testABrokenProfileIsIgnoredWithAWarning() throws {
        let garbage = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let jpeg = try flatJPEG([90, 120, 200], icc: garbage)
        for colour in ColourPolicy.allCases {
            let output = try TiltShiftPipeline.process(jpeg, parameters: .coreImage, encoding: EncodingOptions(colour: colour))
            XCTAssertEqual(try icc(of: output.data), [], "\(colour): a broken profile is not carried")
            XCTAssertEqual(output.warnings.count, 1, "\(colour)")
            XCTAssertTrue(output.warnings.first?.hasPrefix("ignored the embedded ICC profile") ?? false, "\(output.warnings)")
            XCTAssertLessThan(zip(try centre(output.data), [90, 120, 200]).map { abs($0 - $1) }.max() ?? 99, 4)
        }
    }

    func testACMYKJPEGWithoutAProfileIsConvertedWithAWarning() throws {
        let output = try TiltShiftPipeline.process(try TestImages.fixture("cmyk.jpg"), parameters: .coreImage,
                                                   encoding: EncodingOptions(format: .png))
        XCTAssertEqual(try PNGCodec.decode(output.data).channels, 3)
        XCTAssertEqual(output.warnings.count, 1)
        XCTAssertTrue(output.warnings.first?.contains("CMYK JPEG converted to RGB without a profile") ?? false, "\(output.warnings)")
    }
}
