import CTestSupport
import XCTest

@testable import Imaging

/// TIFF in and out: every layout the native paths read (8 and 16 bits, gray, gray+alpha, RGB, RGBA, CMYK, strips and
/// tiles) decodes to the exact samples (16 bits rounded), the Orientation tag turns the image, only the first page
/// is read and the result says so, the ICC profile travels, CMYK is converted (naively, or through its profile), and
/// bad input fails with a message that says what was wrong.
final class TIFFTests: XCTestCase {
    private typealias S = InputFormatSamples

    private func decode(_ data: [UInt8]) throws -> ImageBuffer {
        let (image, format) = try ImageCodec.decode(data)
        XCTAssertEqual(format, .tiff)
        return image
    }

    func testRGBInStripsAndTilesDecodesExactlyWithEveryCompression() throws {
        let original = TestImages.noise(width: 37, height: 29, channels: 3, seed: 5)
        for compression in [S.Compression.none, S.Compression.lzw, S.Compression.deflate, S.Compression.packBits] {
            for tile in [0, 16] {
                let data = try S.tiff(
                    original.pixels, width: 37, height: 29, samplesPerPixel: 3, photometric: S.Photometric.rgb,
                    compression: compression, tile: tile)
                XCTAssertEqual(ImageFormat(sniffing: data), .tiff)
                XCTAssertEqual(try decode(data), original, "compression \(compression), tile \(tile)")
            }
        }
    }

    func testGrayAndAlphaLayouts() throws {
        let gray = TestImages.noise(width: 21, height: 17, channels: 1, seed: 2)
        XCTAssertEqual(
            try decode(
                try S.tiff(
                    gray.pixels, width: 21, height: 17, samplesPerPixel: 1, photometric: S.Photometric.minIsBlack)),
            gray)
        // MINISWHITE: 0 is white.
        let inverted = try decode(
            try S.tiff(gray.pixels, width: 21, height: 17, samplesPerPixel: 1, photometric: S.Photometric.minIsWhite))
        XCTAssertEqual(inverted.pixels, gray.pixels.map { 255 - $0 })
        // Unassociated alpha is kept as it is; gray+alpha becomes RGBA.
        let rgba = TestImages.pattern(width: 21, height: 17, channels: 4, seed: 1)
        XCTAssertEqual(
            try decode(
                try S.tiff(
                    rgba.pixels, width: 21, height: 17, samplesPerPixel: 4, photometric: S.Photometric.rgb,
                    extraSample: S.ExtraSample.unassociatedAlpha, tile: 16)), rgba)
        var grayAlpha: [UInt8] = []
        for i in 0..<(21 * 17) { grayAlpha += [gray.pixels[i], rgba.pixels[4 * i + 3]] }
        let decodedGrayAlpha = try decode(
            try S.tiff(
                grayAlpha, width: 21, height: 17, samplesPerPixel: 2, photometric: S.Photometric.minIsBlack,
                extraSample: S.ExtraSample.unassociatedAlpha))
        XCTAssertEqual(decodedGrayAlpha.channels, 4)
        for i in 0..<(21 * 17) {
            XCTAssertEqual(
                Array(decodedGrayAlpha.pixels[4 * i..<4 * i + 4]),
                [grayAlpha[2 * i], grayAlpha[2 * i], grayAlpha[2 * i], grayAlpha[2 * i + 1]])
        }
        // Associated (premultiplied) alpha is divided out: 100 at alpha 128 is 199 (100 × 255 / 128, rounded).
        let premultiplied: [UInt8] = [100, 50, 128, 128, 0, 0, 0, 0]
        let divided = try decode(
            try S.tiff(
                premultiplied, width: 2, height: 1, samplesPerPixel: 4, photometric: S.Photometric.rgb,
                extraSample: S.ExtraSample.associatedAlpha))
        XCTAssertEqual(divided.pixels, [199, 100, 255, 128, 0, 0, 0, 0])
    }

    func testSixteenBitSamplesAreRoundedToEightBits() throws {
        // Values on both sides of every rounding boundary (v × 255 / 65535 = n + 0.5 at v = 257 n + 128.5).
        var values: [UInt16] = []
        for n in stride(from: 0, to: 255, by: 5) { values += [UInt16(257 * n + 128), UInt16(257 * n + 129)] }
        values += [0, 1, 65534, 65535]
        let width = values.count
        let expected = values.map { UInt8((Double($0) * 255 / 65535).rounded()) }
        for tile in [0, 16] {
            let gray = try decode(
                try S.tiff16(
                    values, width: width, height: 1, samplesPerPixel: 1, photometric: S.Photometric.minIsBlack,
                    tile: tile))
            XCTAssertEqual(gray.pixels, expected, "tile \(tile)")
        }
        let rgb = try decode(
            try S.tiff16(
                values.flatMap { [$0, 65535 - $0, $0] }, width: width, height: 1, samplesPerPixel: 3,
                photometric: S.Photometric.rgb))
        XCTAssertEqual(
            rgb.pixels,
            zip(expected, values).flatMap { e, v in [e, UInt8((Double(65535 - v) * 255 / 65535).rounded()), e] })
    }

    func testCMYKIsConvertedNaivelyWithAWarningOrThroughItsProfile() throws {
        let cmyk: [UInt8] = [0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 255, 0, 128, 255, 64]
        let data = try S.tiff(cmyk, width: 4, height: 1, samplesPerPixel: 4, photometric: S.Photometric.separated)
        let (image, result) = try S.process(data)
        XCTAssertEqual(image.pixels, [255, 255, 255, 0, 255, 255, 0, 0, 0, 191, 95, 0])
        XCTAssertTrue(
            result.warnings.contains { $0.contains("CMYK TIFF converted to RGB without a profile") },
            "\(result.warnings)")
        // With the test's swapped-ink profile, cyan ink takes blue away (not red): the profile was applied.
        var size = 0
        guard let profileBytes = sw_test_swapped_cmyk_profile(&size) else { return XCTFail("no test profile") }
        let profile = Array(UnsafeBufferPointer(start: profileBytes, count: size))
        free(profileBytes)
        let cyan = try S.tiff(
            [255, 0, 0, 0], width: 1, height: 1, samplesPerPixel: 4, photometric: S.Photometric.separated, icc: profile)
        let (converted, convertedResult) = try S.process(cyan)
        XCTAssertEqual(convertedResult.warnings, [])
        XCTAssertGreaterThan(Int(converted.pixels[0]), 200, "red stays: \(converted.pixels)")
        XCTAssertLessThan(Int(converted.pixels[2]), 60, "blue goes: \(converted.pixels)")
    }

    func testSeparatePlanesGoThroughLibtiffsRGBAReaderExactlyAndTurned() throws {
        // PLANARCONFIG_SEPARATE is not a native layout: libtiff's RGBA reader decodes it, a strip at a time.
        let original = TestImages.noise(width: 13, height: 11, channels: 3, seed: 4)
        for orientation in [1, 3, 6] {
            let data = try S.tiff(
                original.pixels, width: 13, height: 11, samplesPerPixel: 3, photometric: S.Photometric.rgb,
                orientation: orientation, separatePlanes: true)
            XCTAssertEqual(
                try S.process(data).image, original.oriented(exifOrientation: orientation), "orientation \(orientation)"
            )
        }
        let rgba = TestImages.pattern(width: 13, height: 11, channels: 4, seed: 2)
        let separateAlpha = try decode(
            try S.tiff(
                rgba.pixels, width: 13, height: 11, samplesPerPixel: 4, photometric: S.Photometric.rgb,
                extraSample: S.ExtraSample.unassociatedAlpha, separatePlanes: true))
        XCTAssertEqual(separateAlpha.channels, 4)
        // libtiff premultiplies unassociated alpha and we divide it out again: within a level or two where alpha is low.
        XCTAssertLessThanOrEqual(TestImages.maxDifference(separateAlpha, rgba), 2)
    }

    func testTheOrientationTagTurnsTheImage() throws {
        let original = TestImages.noise(width: 6, height: 4, channels: 3, seed: 9)
        for orientation in 1...8 {
            let data = try S.tiff(
                original.pixels, width: 6, height: 4, samplesPerPixel: 3, photometric: S.Photometric.rgb,
                orientation: orientation)
            XCTAssertEqual(
                try S.process(data).image, original.oriented(exifOrientation: orientation), "orientation \(orientation)"
            )
        }
    }

    func testOnlyTheFirstPageIsReadAndTheResultSaysSo() throws {
        let original = TestImages.pattern(width: 12, height: 9, channels: 3)
        let data = try S.tiff(
            original.pixels, width: 12, height: 9, samplesPerPixel: 3, photometric: S.Photometric.rgb, pages: 3)
        let (image, result) = try S.process(data, format: nil)
        XCTAssertEqual(image, original)
        XCTAssertEqual(result.format, .tiff, "a TIFF input is written as TIFF")
        XCTAssertTrue(result.warnings.contains("the TIFF has 3 pages: only the first was read"), "\(result.warnings)")
    }

    func testTIFFOutputIsLosslessAndKeepsTheProfile() throws {
        let profile = MetadataTests.adobeRGBProfile()
        for channels in [1, 3, 4] {
            let original = TestImages.noise(width: 33, height: 21, channels: channels, seed: UInt64(channels))
            let data = try ImageCodec.encode(original, options: EncodingOptions(format: .tiff))
            XCTAssertEqual(try decode(data), original, "\(channels) channels")
        }
        let photo = TestImages.pattern(width: 40, height: 30, channels: 3)
        let input = try S.tiff(
            photo.pixels, width: 40, height: 30, samplesPerPixel: 3, photometric: S.Photometric.rgb, icc: profile)
        let result = try TiltShiftPipeline.process(input, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(result.format, .tiff)
        XCTAssertEqual(try MetadataTests.metadata(of: result.data).icc, profile)
        let jpeg = try TiltShiftPipeline.process(
            input, parameters: .coreImage, encoding: EncodingOptions(format: .jpeg))
        XCTAssertEqual(try MetadataTests.metadata(of: jpeg.data).icc, profile, "carried into another format too")
    }

    func testFileToFileStreamsATiledSixteenBitTIFF() throws {
        let width = 300
        let height = 200
        var samples: [UInt16] = []
        samples.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width { samples += [UInt16(x * 200), UInt16(y * 300), UInt16((x + y) * 100)] }
        }
        let data = try S.tiff16(
            samples, width: width, height: height, samplesPerPixel: 3, photometric: S.Photometric.rgb, tile: 64)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.tif").path
        let output = directory.appendingPathComponent("out.tif").path
        try Data(data).write(to: URL(fileURLWithPath: input))
        var timings = PipelineTimings()
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        let result = try TiltShiftPipeline.process(
            file: input, to: output, parameters: parameters, encoding: EncodingOptions(),
            timings: &timings)
        XCTAssertEqual(result.format, .tiff)
        let written = try decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        XCTAssertEqual(written, try decode(data))
        XCTAssertEqual(written[299, 199, 0], UInt8((Double(299 * 200) * 255 / 65535).rounded()))
    }

    func testBadTIFFsFailWithAMessage() throws {
        let original = TestImages.noise(width: 64, height: 48, channels: 3)
        let data = try S.tiff(
            original.pixels, width: 64, height: 48, samplesPerPixel: 3, photometric: S.Photometric.rgb,
            compression: S.Compression.deflate)
        // Truncated: the header survives, the strips do not.
        XCTAssertThrowsError(try ImageCodec.decode(Array(data.prefix(data.count / 2)))) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
        }
        // A header that claims 100000 × 100000 pixels is refused before anything is allocated.
        let huge = try S.tiff(
            [0, 0, 0], width: 1, height: 1, samplesPerPixel: 3, photometric: S.Photometric.rgb,
            compression: S.Compression.none)
        let lying = Self.settingTag(256, to: 100_000, in: Self.settingTag(257, to: 100_000, in: huge))
        XCTAssertThrowsError(try ImageCodec.decode(lying)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(error)")
            XCTAssertTrue("\(error)".contains("100000×100000"), "\(error)")
        }
        // A compression libtiff does not know names the scheme and what to do.
        let unknown = try S.tiff(
            [1, 2, 3], width: 1, height: 1, samplesPerPixel: 3, photometric: S.Photometric.rgb,
            compression: S.Compression.none)
        XCTAssertThrowsError(try ImageCodec.decode(Self.settingTag(259, to: Int(S.Compression.unknown), in: unknown))) {
            error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
            XCTAssertTrue("\(error)".contains("compression") && "\(error)".contains("34999"), "\(error)")
        }
        // Corrupt strips: every byte after the header flipped in turn at a few places decodes or fails, never crashes.
        for offset in stride(from: 8, to: data.count, by: max(1, data.count / 40)) {
            var corrupt = data
            corrupt[offset] ^= 0xA5
            do {
                let image = try ImageCodec.decode(corrupt).image
                XCTAssertEqual([image.width, image.height].allSatisfy { $0 > 0 }, true)
            } catch let error as ImagingError {
                XCTAssertTrue([.decode, .limit].contains(error.kind), "\(error)")
            }
        }
    }

    /// `tiff` with the SHORT or LONG value of `tag` in its first directory set to `value` (a little-endian file).
    static func settingTag(_ tag: Int, to value: Int, in tiff: [UInt8]) -> [UInt8] {
        var bytes = tiff
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let ifd = u16(4) | u16(6) << 16
        for entry in 0..<u16(ifd) {
            let at = ifd + 2 + 12 * entry
            guard u16(at) == tag else { continue }
            if u16(at + 2) == 3, value <= 0xFFFF {  // SHORT: the value in the first two bytes
                bytes[at + 8] = UInt8(value & 255)
                bytes[at + 9] = UInt8(value >> 8 & 255)
            } else {  // made a LONG
                (bytes[at + 2], bytes[at + 3]) = (4, 0)
                (bytes[at + 8], bytes[at + 9], bytes[at + 10], bytes[at + 11]) =
                    (UInt8(value & 255), UInt8(value >> 8 & 255), UInt8(value >> 16 & 255), UInt8(value >> 24 & 255))
            }
        }
        return bytes
    }
}
