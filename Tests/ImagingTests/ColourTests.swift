import CTestSupport
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
        return try JPEGRowEncoder(
            width: 64, height: 48, channels: 3, quality: 98, metadata: metadata, destination: .memory
        )
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
        let converted = try TiltShiftPipeline.process(
            jpeg, parameters: .coreImage, encoding: EncodingOptions(colour: .srgb))
        XCTAssertEqual(try icc(of: converted.data), [], "sRGB output carries no profile")
        let before = try centre(kept.data)
        let after = try centre(converted.data)
        // Adobe RGB is wider than sRGB: the same green, written in sRGB numbers, is more saturated.
        XCTAssertGreaterThan(after[1] - after[0], before[1] - before[0] + 10, "\(before) -> \(after)")
        // A neutral stays neutral.
        let gray = try TiltShiftPipeline.process(
            try flatJPEG([128, 128, 128], icc: profile), parameters: .coreImage,
            encoding: EncodingOptions(colour: .srgb))
        let g = try centre(gray.data)
        XCTAssertLessThanOrEqual((g.max() ?? 0) - (g.min() ?? 0), 2, "\(g)")
    }

    func testABrokenProfileIsIgnoredWithAWarning() throws {
        let garbage = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let jpeg = try flatJPEG([90, 120, 200], icc: garbage)
        for colour in ColourPolicy.allCases {
            let output = try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage, encoding: EncodingOptions(colour: colour))
            XCTAssertEqual(try icc(of: output.data), [], "\(colour): a broken profile is not carried")
            XCTAssertEqual(output.warnings.count, 1, "\(colour)")
            XCTAssertTrue(
                output.warnings.first?.hasPrefix("ignored the embedded ICC profile") ?? false, "\(output.warnings)")
            XCTAssertLessThan(zip(try centre(output.data), [90, 120, 200]).map { abs($0 - $1) }.max() ?? 99, 4)
        }
    }

    func testACMYKJPEGWithoutAProfileIsConvertedWithAWarning() throws {
        let output = try TiltShiftPipeline.process(
            try TestImages.fixture("cmyk.jpg"), parameters: .coreImage,
            encoding: EncodingOptions(format: .png))
        XCTAssertEqual(try PNGCodec.decode(output.data).channels, 3)
        XCTAssertEqual(output.warnings.count, 1)
        XCTAssertTrue(
            output.warnings.first?.contains("CMYK JPEG converted to RGB without a profile") ?? false,
            "\(output.warnings)")
    }

    /// Golden: a CMYK JPEG made here, with an embedded CMYK profile made here (LittleCMS) whose inks are swapped
    /// (cyan ink takes away blue, yellow takes away red), comes out in the colours the profile says, not in those
    /// of the naive conversion; the output is RGB without the CMYK profile, and no warning is given.
    func testACMYKJPEGIsConvertedThroughItsEmbeddedProfile() throws {
        var profileSize = 0
        guard let profileBytes = sw_test_swapped_cmyk_profile(&profileSize) else { return XCTFail("no profile made") }
        defer { free(profileBytes) }
        let profile = Array(UnsafeBufferPointer(start: profileBytes, count: profileSize))
        // Patches of 16×16 pixels, as ink amounts (0…255), and the sRGB colour the swapped inks give.
        let patches: [(ink: [Int], expected: [Int])] = [
            ([0, 0, 0, 0], [255, 255, 255]),  // paper
            ([255, 0, 0, 0], [255, 255, 0]),  // cyan ink: yellow here (naively: cyan 0,255,255)
            ([0, 255, 0, 0], [255, 0, 255]),  // magenta ink: magenta either way
            ([0, 0, 255, 0], [0, 255, 255]),  // yellow ink: cyan here (naively: yellow)
            ([255, 255, 0, 0], [255, 0, 0]),  // cyan + magenta: red here (naively: blue)
            ([0, 0, 0, 255], [0, 0, 0]),  // black
        ]
        let (side, width, height) = (16, 16 * patches.count, 16)
        var cmyk = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                // Adobe's inverted CMYK (libjpeg writes the Adobe marker): 255 means no ink.
                for c in 0..<4 { cmyk[(y * width + x) * 4 + c] = UInt8(255 - patches[x / side].ink[c]) }
            }
        }
        var jpegSize = 0
        guard let jpegBytes = sw_test_cmyk_jpeg(cmyk, Int32(width), Int32(height), profile, profile.count, &jpegSize)
        else {
            return XCTFail("no JPEG made")
        }
        defer { free(jpegBytes) }
        let jpeg = Array(UnsafeBufferPointer(start: jpegBytes, count: jpegSize))
        for colour in ColourPolicy.allCases {
            let output = try TiltShiftPipeline.process(
                jpeg, parameters: TiltShiftParameters(blurRadius: 0),
                encoding: EncodingOptions(format: .png, colour: colour))
            XCTAssertEqual(output.warnings, [], "\(colour)")
            let image = try PNGCodec.decode(output.data)
            XCTAssertEqual(image.channels, 3)
            XCTAssertEqual(
                try MetadataTests.metadata(of: output.data).icc, [],
                "the CMYK profile does not travel with RGB pixels")
            for (index, patch) in patches.enumerated() {
                let centre = (0..<3).map { Int(image[index * side + side / 2, side / 2, $0]) }
                let error = zip(centre, patch.expected).map { abs($0 - $1) }.max() ?? 255
                XCTAssertLessThanOrEqual(
                    error, 6, "\(colour) patch \(index) (ink \(patch.ink)): \(centre), expected \(patch.expected)")
            }
        }
    }
}
