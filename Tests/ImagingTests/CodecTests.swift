import XCTest

@testable import Imaging

final class CodecTests: XCTestCase {
    private let sizes = [(1, 1), (7, 5), (64, 48), (333, 211)]

    func testPNGRoundTripIsExactForEveryChannelCount() throws {
        for (w, h) in sizes {
            for channels in [1, 3, 4] {
                for image in [
                    TestImages.pattern(width: w, height: h, channels: channels),
                    TestImages.noise(width: w, height: h, channels: channels),
                ] {
                    let encoded = try PNGCodec.encode(image)
                    XCTAssertEqual(ImageFormat(sniffing: encoded), .png)
                    let decoded = try PNGCodec.decode(encoded)
                    XCTAssertEqual(decoded, image, "\(w)×\(h)×\(channels)")
                }
            }
        }
    }

    func testPNGRoundTripAtEveryCompressionLevel() throws {
        let image = TestImages.pattern(width: 50, height: 40, channels: 3)
        for level in [0, 1, 3, 6, 9] {
            XCTAssertEqual(try PNGCodec.decode(PNGCodec.encode(image, compressionLevel: level)), image)
        }
    }

    func testJPEGRoundTripIsWithinTolerance() throws {
        for (w, h) in sizes {
            for channels in [1, 3] {
                let image = TestImages.pattern(width: w, height: h, channels: channels)
                let encoded = try JPEGCodec.encode(image, quality: 95)
                XCTAssertEqual(ImageFormat(sniffing: encoded), .jpeg)
                let decoded = try JPEGCodec.decode(encoded)
                XCTAssertEqual(decoded.width, w)
                XCTAssertEqual(decoded.height, h)
                XCTAssertEqual(decoded.channels, channels)
                let mean = TestImages.meanDifference(decoded, image)
                XCTAssertLessThan(mean, 2.5, "\(w)×\(h)×\(channels): mean error \(mean)")
                XCTAssertGreaterThan(TestImages.psnr(decoded, image), 35, "\(w)×\(h)×\(channels)")
            }
        }
    }

    func testJPEGQualityChangesSize() throws {
        let image = TestImages.noise(width: 128, height: 128, channels: 3)
        let low = try JPEGCodec.encode(image, quality: 30)
        let high = try JPEGCodec.encode(image, quality: 95)
        XCTAssertLessThan(low.count, high.count)
    }

    func testRGBAToJPEGCompositesOverWhite() throws {
        var image = ImageBuffer(width: 16, height: 16, channels: 4, filledWith: 0)  // transparent black
        for i in 0..<(16 * 8) {
            image.pixels[4 * i] = 255
            image.pixels[4 * i + 3] = 255
        }  // top half opaque red
        let decoded = try JPEGCodec.decode(JPEGCodec.encode(image, quality: 95))
        XCTAssertEqual(decoded.channels, 3)
        XCTAssertGreaterThan(decoded[8, 14, 1], 240, "transparent area becomes white")
        XCTAssertGreaterThan(decoded[8, 2, 0], 230)
        XCTAssertLessThan(decoded[8, 2, 1], 30, "opaque red stays red")
    }

    func testRealPhotographDecodes() throws {
        let data = try TestImages.fixture("photo.jpg")
        let (image, format) = try ImageCodec.decode(data)
        XCTAssertEqual(format, .jpeg)
        XCTAssertEqual(image.channels, 3)
        XCTAssertGreaterThan(image.width, 100)
        XCTAssertGreaterThan(image.height, 100)
    }

    func testSniffing() {
        XCTAssertEqual(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0]), .jpeg)
        XCTAssertEqual(ImageFormat(sniffing: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]), .png)
        XCTAssertNil(ImageFormat(sniffing: Array("<!DOCTYPE html>".utf8)))
        XCTAssertNil(ImageFormat(sniffing: [UInt8]()))
        XCTAssertNil(ImageFormat(sniffing: [0x89, 0x50, 0x4E, 0x47]))
        XCTAssertEqual(ImageFormat.jpeg.fileExtension, "jpg")
        XCTAssertEqual(ImageFormat.png.mediaType, "image/png")
    }

    func testTruncatedJPEGIsADecodeError() throws {
        let data = try TestImages.fixture("truncated.jpg")
        XCTAssertThrowsError(try ImageCodec.decode(data)) { error in
            let error = error as? ImagingError
            XCTAssertEqual(error?.kind, .decode)
            XCTAssertTrue(error?.message.contains("truncated") ?? false, "\(String(describing: error))")
        }
    }

    func testCorruptPNGIsADecodeError() throws {
        let data = try TestImages.fixture("corrupt.png")
        XCTAssertThrowsError(try ImageCodec.decode(data)) { error in
            let error = error as? ImagingError
            XCTAssertEqual(error?.kind, .decode)
            XCTAssertTrue(error?.message.hasPrefix("cannot read PNG") ?? false, "\(String(describing: error))")
        }
    }

    func testHTMLIsNotAnImage() throws {
        let data = try TestImages.fixture("not-an-image.html")
        XCTAssertThrowsError(try ImageCodec.decode(data)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode)
            XCTAssertEqual(
                (error as? ImagingError)?.message,
                "not a JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP image (starts with '<!DO')")
        }
    }

    func testGarbageAfterAValidSignatureIsADecodeError() {
        for bytes: [UInt8] in [
            [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 9],
        ] {
            XCTAssertThrowsError(try ImageCodec.decode(bytes)) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .decode)
            }
        }
        XCTAssertThrowsError(try ImageCodec.decode([])) { error in
            XCTAssertEqual(
                (error as? ImagingError)?.message,
                "not a JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP image (the data is empty)")
        }
    }
}

/// PNG and JPEG variants found in the wild, each compared with what Pillow decodes from the same file.
final class CodecVariantTests: XCTestCase {
    private func decode(_ name: String) throws -> ImageBuffer {
        try ImageCodec.decode(TestImages.fixture(name)).image
    }

    func testPalettePNGExpandsToRGB() throws {
        let image = try decode("palette.png")
        XCTAssertEqual(image.channels, 3)
        XCTAssertEqual(image, try decode("palette-expected.png"))
    }

    func testGrayPNGs() throws {
        XCTAssertEqual(try decode("gray.png").channels, 1)
        let bits = try decode("gray1bit.png")
        XCTAssertEqual(bits.channels, 1)
        XCTAssertEqual(bits, try decode("gray1bit-expected.png"), "1-bit gray expands to 0 and 255")
    }

    func testGrayAlphaPNGBecomesRGBA() throws {
        let image = try decode("gray-alpha.png")
        XCTAssertEqual(image.channels, 4)
        XCTAssertEqual(image, try decode("gray-alpha-expected.png"))
    }

    func testSixteenBitPNGIsScaledTo8Bits() throws {
        XCTAssertEqual(try decode("rgb16.png"), try decode("reference-rgb.png"))
    }

    func testInterlacedPNG() throws {
        XCTAssertEqual(try decode("interlaced.png"), try decode("reference-rgb.png"))
    }

    func testRGBAPNGKeepsAlpha() throws {
        let image = try decode("rgba.png")
        XCTAssertEqual(image.channels, 4)
        XCTAssertTrue(image.hasTransparency)
        XCTAssertEqual(try PNGCodec.decode(PNGCodec.encode(image)), image)
    }

    func testCMYKJPEGIsConvertedToRGB() throws {
        let image = try decode("cmyk.jpg")
        XCTAssertEqual(image.channels, 3)
        let reference = try decode("reference-rgb.png")
        XCTAssertLessThan(TestImages.meanDifference(image, reference), 6)
    }

    func testEXIFOrientationIsApplied() throws {
        let stored = try JPEGCodec.decode(TestImages.fixture("exif-orientation-6.jpg"), applyOrientation: false)
        XCTAssertEqual(stored.width, 40)
        XCTAssertEqual(stored.height, 60)
        let image = try decode("exif-orientation-6.jpg")
        XCTAssertEqual(image.width, 60)
        XCTAssertEqual(image.height, 40)
        let upright = try decode("upright.png")
        let error = TestImages.meanDifference(image, upright)
        XCTAssertLessThan(error, 8)
        // The opposite quarter turn is far off: the test tells the two apart.
        let wrong = stored.oriented(exifOrientation: 8)
        XCTAssertGreaterThan(TestImages.meanDifference(wrong, upright), 3 * error)
    }

    func testEveryOrientationRoundTrips() {
        let image = TestImages.noise(width: 5, height: 3, channels: 3)
        // Applying orientation 6 four times (four quarter turns) gives the image back; 3 twice too.
        var turned = image
        for _ in 0..<4 { turned = turned.oriented(exifOrientation: 6) }
        XCTAssertEqual(turned, image)
        XCTAssertEqual(image.oriented(exifOrientation: 3).oriented(exifOrientation: 3), image)
        for orientation in [2, 4, 5, 7] {
            XCTAssertEqual(
                image.oriented(exifOrientation: orientation).oriented(exifOrientation: orientation), image,
                "\(orientation)")
        }
        XCTAssertEqual(image.oriented(exifOrientation: 6).oriented(exifOrientation: 8), image)
    }

    func testDecompressionBombIsRefusedBeforeDecoding() throws {
        let data = try TestImages.fixture("bomb.png")
        XCTAssertThrowsError(try ImageCodec.decode(data)) { error in
            let error = error as? ImagingError
            XCTAssertEqual(error?.kind, .limit)
            XCTAssertEqual(
                error?.message,
                "image is 100000×100000 (10000 megapixels), over the limit of 150 megapixels (a possible decompression bomb); "
                    + "raise it with --max-megapixels or ImageLimits.maxPixels if the image is genuine")
        }
    }

    func testJPEGWithHugeDimensionsIsRefused() throws {
        // Patch the frame header (SOF0) of a real JPEG to claim 60000×60000 pixels.
        var data = try TestImages.fixture("photo.jpg")
        var i = 2
        while i + 9 < data.count {
            guard data[i] == 0xFF else { break }
            let marker = data[i + 1]
            let length = Int(data[i + 2]) << 8 | Int(data[i + 3])
            if marker == 0xC0 || marker == 0xC2 {
                data[i + 5] = 0xEA
                data[i + 6] = 0x60
                data[i + 7] = 0xEA
                data[i + 8] = 0x60
                break
            }
            i += 2 + length
        }
        XCTAssertThrowsError(try ImageCodec.decode(data)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit)
        }
    }

    func testByteLimit() throws {
        let data = try TestImages.fixture("photo.jpg")
        XCTAssertThrowsError(try ImageCodec.decode(data, limits: ImageLimits(maxBytes: 1000))) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit)
            XCTAssertTrue((error as? ImagingError)?.message.contains("--max-bytes") ?? false)
        }
    }
}
