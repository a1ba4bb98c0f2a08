import CImageCodecs
import XCTest

@testable import Imaging

/// WebP and AVIF: what we encode decodes back close to the original, through the codecs and the pipeline, with
/// the ICC profile carried; WebP and AVIF inputs decode within the limits; what cannot be written is refused
/// before any work.
final class WebPAVIFTests: XCTestCase {
    private func photo() throws -> ImageBuffer { try PNGCodec.decode(try TestImages.fixture("photo.png")) }

    func testWhatWeEncodeDecodesBackWithinAPSNRBound() throws {
        let original = try photo()
        // At the default qualities (WebP 80, AVIF 60) and higher, on a noisy photograph (4:2:0 chroma bounds both):
        // measured here 33.0 and 36.0 dB (WebP), 33.2 and 36.2 dB (AVIF).
        for (format, quality, bound) in [
            (ImageFormat.webp, 80, 31.0), (.webp, 95, 34.5), (.avif, 60, 31.0), (.avif, 90, 34.5),
        ] {
            var options = EncodingOptions(format: format)
            options.setLossyQuality(quality)
            let data = try ImageCodec.encode(original, options: options)
            XCTAssertEqual(ImageFormat(sniffing: data), format)
            let (decoded, sniffed) = try ImageCodec.decode(data)
            XCTAssertEqual(sniffed, format)
            XCTAssertEqual([decoded.width, decoded.height, decoded.channels], [original.width, original.height, 3])
            let psnr = TestImages.psnr(original, decoded)
            XCTAssertGreaterThan(psnr, bound, "\(format) at quality \(quality): \(psnr) dB")
        }
    }

    func testQualityChangesTheSize() throws {
        let original = try photo()
        for format in [ImageFormat.webp, .avif] {
            var low = EncodingOptions(format: format)
            var high = EncodingOptions(format: format)
            low.setLossyQuality(30)
            high.setLossyQuality(95)
            XCTAssertLessThan(
                try ImageCodec.encode(original, options: low).count,
                try ImageCodec.encode(original, options: high).count, "\(format)")
        }
    }

    func testAlphaAndGrayRoundTrip() throws {
        let rgba = TestImages.pattern(width: 96, height: 64, channels: 4, seed: 3)
        let gray = TestImages.pattern(width: 96, height: 64, channels: 1, seed: 4)
        for format in [ImageFormat.webp, .avif] {
            var options = EncodingOptions(format: format)
            options.setLossyQuality(100)
            let decodedRGBA = try ImageCodec.decode(try ImageCodec.encode(rgba, options: options)).image
            XCTAssertEqual(decodedRGBA.channels, 4, "\(format) keeps alpha")
            XCTAssertGreaterThan(TestImages.psnr(rgba, decodedRGBA), 30, "\(format)")
            // Gray is written as RGB (neither output stores gray): it decodes as three equal-ish channels.
            let decodedGray = try ImageCodec.decode(try ImageCodec.encode(gray, options: options)).image
            XCTAssertEqual(decodedGray.channels, 3, "\(format)")
            let expected = try ImageBuffer(
                width: 96, height: 64, channels: 3, pixels: gray.pixels.flatMap { [$0, $0, $0] })
            XCTAssertGreaterThan(TestImages.psnr(expected, decodedGray), 30, "\(format)")
        }
    }

    func testThePipelineWritesTheChosenFormatWithTheProfileKept() throws {
        let profile = MetadataTests.adobeRGBProfile()
        var metadata = ImageMetadata()
        metadata.icc = profile
        metadata.exif = MetadataTests.exif(orientation: 1)
        let original = try photo()
        let jpeg = try JPEGRowEncoder(
            width: original.width, height: original.height, channels: 3, quality: 95,
            metadata: metadata, destination: .memory
        ).encode(original, token: .never)
        for format in [ImageFormat.webp, .avif] {
            let kept = try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage, encoding: EncodingOptions(format: format))
            XCTAssertEqual(kept.format, format)
            XCTAssertEqual(ImageFormat(sniffing: kept.data), format)
            XCTAssertEqual([kept.width, kept.height], [original.width, original.height])
            let carried = try MetadataTests.metadata(of: kept.data)
            XCTAssertEqual(carried.icc, profile, "\(format): --colour keep carries the profile")
            XCTAssertEqual(sw_exif_orientation_of(carried.exif), 1, "\(format)")
            XCTAssertFalse(carried.exif.isEmpty, "\(format): --metadata keep carries EXIF")
            let converted = try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage,
                encoding: EncodingOptions(format: format, metadata: .strip, colour: .srgb))
            let stripped = try MetadataTests.metadata(of: converted.data)
            XCTAssertEqual(stripped.icc, [], "\(format): sRGB output carries no profile")
            XCTAssertEqual(stripped.exif, [], "\(format): --metadata strip")
            // The filtered image, decoded back, is the JPEG path's image within the lossy formats' error.
            let reference = try ImageCodec.decode(
                try TiltShiftPipeline.process(
                    jpeg, parameters: .coreImage,
                    encoding: EncodingOptions(format: .png)
                ).data
            ).image
            XCTAssertGreaterThan(TestImages.psnr(reference, try ImageCodec.decode(kept.data).image), 30, "\(format)")
        }
    }

    func testWebPAndAVIFInputsGoThroughThePipelineAndFromFiles() throws {
        let original = try photo()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webp-avif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for format in [ImageFormat.webp, .avif] {
            let input = try ImageCodec.encode(original, options: EncodingOptions(format: format))
            let inMemory = try TiltShiftPipeline.process(input, parameters: .coreImage, encoding: EncodingOptions())
            XCTAssertEqual(inMemory.format, format, "the input's format by default")
            let path = directory.appendingPathComponent("in.\(format.fileExtension)").path
            let output = directory.appendingPathComponent("out.png").path
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(input)))
            var timings = PipelineTimings()
            let fromFile = try TiltShiftPipeline.process(
                file: path, to: output, parameters: .coreImage,
                encoding: EncodingOptions(format: .png), timings: &timings)
            XCTAssertEqual([fromFile.width, fromFile.height], [original.width, original.height])
            let written = try PNGCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
            XCTAssertEqual([written.width, written.height], [original.width, original.height])
        }
    }

    func testDecodersKeepThePixelAndByteLimits() throws {
        let image = TestImages.pattern(width: 300, height: 200, channels: 3)
        for format in [ImageFormat.webp, .avif] {
            let data = try ImageCodec.encode(image, options: EncodingOptions(format: format))
            XCTAssertThrowsError(try ImageCodec.decode(data, limits: ImageLimits(maxPixels: 59_999))) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(format): \(error)")
            }
            XCTAssertThrowsError(try ImageCodec.decode(data, limits: ImageLimits(maxBytes: data.count - 1))) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(format): \(error)")
            }
            XCTAssertNoThrow(try ImageCodec.decode(data, limits: ImageLimits(maxPixels: 60_000, maxBytes: data.count)))
        }
    }

    func testTruncatedAndCorruptInputsFailAsDecodeErrors() throws {
        let image = TestImages.pattern(width: 64, height: 48, channels: 3)
        for format in [ImageFormat.webp, .avif] {
            let data = try ImageCodec.encode(image, options: EncodingOptions(format: format))
            for broken in [
                Array(data.prefix(data.count / 2)), Array(data.prefix(40)) + [UInt8](repeating: 0x5A, count: 200),
            ] {
                XCTAssertThrowsError(try ImageCodec.decode(broken)) { error in
                    XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(format): \(error)")
                }
            }
        }
    }

    func testAWebPTooLargeForTheFormatIsRefusedBeforeAnyWork() throws {
        // 16384 pixels wide: one more than WebP can hold. PNG in, so the check comes before any filtering.
        let wide = TestImages.pattern(width: 16_384, height: 4, channels: 3)
        let png = try PNGCodec.encode(wide)
        XCTAssertThrowsError(
            try TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions(format: .webp))
        ) { error in
            let message = (error as? ImagingError)?.message ?? ""
            XCTAssertTrue(
                message.contains("at most 16383 pixels a side") && message.contains("jpeg, png, avif"), message)
        }
        XCTAssertNoThrow(
            try TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions(format: .jpeg)))
    }

    func testSniffing() {
        XCTAssertEqual(ImageFormat(sniffing: Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)), .webp)
        XCTAssertNil(ImageFormat(sniffing: Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)), "a WAV file is RIFF too")
        let ftyp: [UInt8] = [0, 0, 0, 28] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1miafavif".utf8)
        XCTAssertEqual(ImageFormat(sniffing: ftyp), .avif, "avif among the compatible brands")
        let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        XCTAssertEqual(ImageFormat(sniffing: heic), .heif, "HEIC is not AVIF")
        XCTAssertEqual(ImageFormat(sniffing: Array("II*\u{0}".utf8) + [8, 0, 0, 0]), .tiff)
        XCTAssertEqual(ImageFormat(sniffing: [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]), .tiff)
        XCTAssertEqual(ImageFormat(sniffing: Array("GIF87a".utf8)), .gif)
        XCTAssertEqual(
            ImageFormat(sniffing: Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [124, 0, 0, 0]), .bmp)
        XCTAssertNil(
            ImageFormat(sniffing: Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [99, 0, 0, 0]),
            "BM and no header size")
        XCTAssertNil(ImageFormat(sniffing: Array("GIF90a".utf8)))
        let video: [UInt8] = [0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 0, 0] + Array("isommp41".utf8)
        XCTAssertNil(ImageFormat(sniffing: video), "an MP4 is ISO BMFF too")
        XCTAssertEqual(ImageFormat(name: "tif"), .tiff)
        XCTAssertEqual(ImageFormat(name: "HEIC"), .heif)
        XCTAssertEqual(ImageFormat.writable, [.jpeg, .png, .webp, .avif, .tiff])
        XCTAssertEqual(
            ImageFormat.allCases.map(\.defaultOutput), [.jpeg, .png, .webp, .avif, .tiff, .jpeg, .jpeg, .jpeg])
        XCTAssertEqual(ImageFormat(name: "WebP"), .webp)
        XCTAssertEqual(ImageFormat(mediaType: "image/avif"), .avif)
    }
}

/// The orientation of EXIF data (1 when there is none).
private func sw_exif_orientation_of(_ exif: [UInt8]) -> Int {
    exif.withUnsafeBufferPointer { Int(sw_exif_orientation($0.baseAddress, $0.count)) }
}
