import XCTest

@testable import Imaging

/// BMP input (our own reader): every pixel layout decodes to the exact colours, bottom-up and top-down, from memory
/// and from a file; the V5 header's profile travels; RLE, lying headers and truncated files fail with a message.
final class BMPTests: XCTestCase {
    private typealias S = InputFormatSamples

    private func decode(_ data: [UInt8]) throws -> ImageBuffer {
        let (image, format) = try ImageCodec.decode(data)
        XCTAssertEqual(format, .bmp)
        return image
    }

    /// The rows of `image` (RGB) as 24-bit BGR.
    private func bgrRows(_ image: ImageBuffer) -> [[UInt8]] {
        (0..<image.height).map { y in
            (0..<image.width).flatMap { x in [image[x, y, 2], image[x, y, 1], image[x, y, 0]] }
        }
    }

    func testTwentyFourBitsBottomUpAndTopDownWithEveryHeader() throws {
        let original = TestImages.noise(width: 7, height: 5, channels: 3, seed: 3)
        for header in [12, 40, 108, 124] {
            for topDown in header == 12 ? [false] : [false, true] {
                let data = S.bmp(width: 7, rows: bgrRows(original), bits: 24, headerSize: header, topDown: topDown)
                XCTAssertEqual(ImageFormat(sniffing: data), .bmp)
                XCTAssertEqual(try decode(data), original, "header \(header), top-down \(topDown)")
            }
        }
    }

    func testPalettesAndBitFields() throws {
        // 8 bits: a palette of three colours; an index past it is black.
        let palette: [UInt8] = [0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0]  // BGR0: red, green, blue
        let eight = try decode(S.bmp(width: 4, rows: [[0, 1, 2, 9]], bits: 8, palette: palette))
        XCTAssertEqual(eight.pixels, [255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0])
        // 1 bit: the most significant bit first.
        let bw: [UInt8] = [0, 0, 0, 0, 255, 255, 255, 0]
        let one = try decode(S.bmp(width: 10, rows: [[0b1010_0000, 0b0100_0000]], bits: 1, palette: bw))
        XCTAssertEqual(stride(from: 0, to: 30, by: 3).map { one.pixels[$0] }, [255, 0, 255, 0, 0, 0, 0, 0, 0, 255])
        // 4 bits.
        let four = try decode(S.bmp(width: 3, rows: [[0x12, 0x00]], bits: 4, palette: palette))
        XCTAssertEqual(four.pixels, [0, 255, 0, 0, 0, 255, 255, 0, 0])
        // 16 bits, 5-6-5 bit fields: 5-bit 31 is 255, 6-bit 32 is 130 (32 × 255 / 63, rounded).
        let rgb565 = 0b11111_100000_00000
        let sixteen = try decode(
            S.bmp(
                width: 1, rows: [[UInt8(rgb565 & 255), UInt8(rgb565 >> 8)]], bits: 16,
                masks: [0xF800, 0x07E0, 0x001F]))
        XCTAssertEqual(sixteen.pixels, [255, 130, 0])
        // 16 bits without fields: 5-5-5.
        let rgb555 = 0b0_00000_11111_00000
        XCTAssertEqual(
            try decode(S.bmp(width: 1, rows: [[UInt8(rgb555 & 255), UInt8(rgb555 >> 8)]], bits: 16)).pixels,
            [0, 255, 0])
        // 32 bits with an alpha mask (V4 header): RGBA.
        let rgba = TestImages.noise(width: 5, height: 3, channels: 4, seed: 8)
        let rows = (0..<3).map { y in
            (0..<5).flatMap { x in [rgba[x, y, 2], rgba[x, y, 1], rgba[x, y, 0], rgba[x, y, 3]] }
        }
        XCTAssertEqual(
            try decode(
                S.bmp(
                    width: 5, rows: rows, bits: 32, headerSize: 108,
                    masks: [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000])), rgba)
        // 32 bits, BI_RGB: the fourth byte is unused, the image RGB.
        let rgb = try decode(S.bmp(width: 5, rows: rows, bits: 32))
        XCTAssertEqual(rgb.channels, 3)
        XCTAssertEqual([rgb[4, 2, 0], rgb[4, 2, 1], rgb[4, 2, 2]], [rgba[4, 2, 0], rgba[4, 2, 1], rgba[4, 2, 2]])
    }

    func testTheEmbeddedProfileTravelsAndFilesStream() throws {
        let profile = MetadataTests.adobeRGBProfile()
        let original = TestImages.pattern(width: 64, height: 48, channels: 3)
        let data = S.bmp(width: 64, rows: bgrRows(original), bits: 24, headerSize: 124, icc: profile)
        let result = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(result.format, .jpeg, "BMP is read, not written: JPEG by default")
        XCTAssertTrue(result.warnings.contains { $0.hasPrefix("BMP input written as JPEG") }, "\(result.warnings)")
        XCTAssertEqual(try MetadataTests.metadata(of: result.data).icc, profile)
        // From a file, bottom-up (the reader seeks): the same pixels as from memory.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.bmp").path
        let output = directory.appendingPathComponent("out.png").path
        try Data(data).write(to: URL(fileURLWithPath: input))
        var timings = PipelineTimings()
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        _ = try TiltShiftPipeline.process(
            file: input, to: output, parameters: parameters, encoding: EncodingOptions(format: .png),
            timings: &timings)
        XCTAssertEqual(
            try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))).image, original)
    }

    func testBadBMPsFailWithAMessage() throws {
        func failure(_ data: [UInt8]) -> ImagingError? {
            do {
                _ = try ImageCodec.decode(data)
                return nil
            } catch {
                return error as? ImagingError
            }
        }
        let rows = bgrRows(TestImages.noise(width: 16, height: 16, channels: 3))
        let good = S.bmp(width: 16, rows: rows, bits: 24)
        // Truncated: the row that is missing is named.
        let truncated = failure(Array(good.prefix(good.count - 100)))
        XCTAssertEqual(truncated?.kind, .decode)
        XCTAssertTrue(truncated?.message.contains("truncated") ?? false, "\(String(describing: truncated))")
        // A header claiming 60000 × 60000 pixels: refused by the limit before any row is allocated or read.
        var lying = good
        lying.replaceSubrange(18..<26, with: [0x60, 0xEA, 0, 0, 0x60, 0xEA, 0, 0])
        XCTAssertEqual(failure(lying)?.kind, .limit)
        // RLE, a masks that are not runs of bits, a zero plane count, an unknown header: each named.
        let rle = failure(S.bmp(width: 16, rows: rows, bits: 8, palette: [0, 0, 0, 0], compression: 1))
        XCTAssertTrue(
            rle?.message.contains("RLE-compressed BMP is not supported") ?? false, "\(String(describing: rle))")
        let masks = failure(S.bmp(width: 1, rows: [[0, 0]], bits: 16, masks: [0xF0F0, 0x0F00, 0x000F]))
        XCTAssertTrue(masks?.message.contains("colour masks") ?? false, "\(String(describing: masks))")
        var planes = good
        planes[26] = 0
        XCTAssertTrue(failure(planes)?.message.contains("plane count") ?? false)
        var os2 = good
        os2[14] = 64
        XCTAssertTrue(failure(os2)?.message.contains("64-byte header") ?? false)
        // Pixels said to start inside the header.
        var offset = good
        offset[10] = 20
        XCTAssertTrue(failure(offset)?.message.contains("start inside its header") ?? false)
        // Any byte of the headers changed decodes or fails, never crashes.
        for index in 0..<60 {
            for value: UInt8 in [0, 0x7F, 0xFF] {
                var corrupt = good
                corrupt[index] = value
                if let error = failure(corrupt) { XCTAssertTrue([.decode, .limit].contains(error.kind), "\(error)") }
            }
        }
    }
}
