import CTestSupport
import XCTest

@testable import Imaging

/// Inputs of the formats Imaging reads besides JPEG, PNG, WebP and AVIF, made by the tests themselves: TIFF, GIF and
/// HEIC written with libtiff, giflib and libheif (CTestSupport), BMP assembled byte by byte.
enum InputFormatSamples {
    /// libtiff's values of the tags the samples set.
    enum Photometric { static let minIsWhite: Int32 = 0, minIsBlack: Int32 = 1, rgb: Int32 = 2, separated: Int32 = 5 }
    enum Compression {
        static let none: Int32 = 1, lzw: Int32 = 5, deflate: Int32 = 8, packBits: Int32 = 32773, unknown: Int32 = 34999
    }
    enum ExtraSample { static let associatedAlpha: Int32 = 1, unassociatedAlpha: Int32 = 2 }

    /// A TIFF of 8-bit `samples`.
    static func tiff(
        _ samples: [UInt8], width: Int, height: Int, samplesPerPixel: Int, photometric: Int32,
        compression: Int32 = Compression.lzw, extraSample: Int32 = 0, tile: Int = 0, orientation: Int = 1,
        pages: Int = 1, icc: [UInt8] = [], separatePlanes: Bool = false
    ) throws -> [UInt8] {
        try samples.withUnsafeBytes { raw in
            try tiff(
                raw.baseAddress, width: width, height: height, samplesPerPixel: samplesPerPixel, bits: 8,
                photometric: photometric, compression: compression, extraSample: extraSample, tile: tile,
                orientation: orientation, pages: pages, icc: icc, separatePlanes: separatePlanes)
        }
    }

    /// A TIFF of 16-bit `samples`.
    static func tiff16(
        _ samples: [UInt16], width: Int, height: Int, samplesPerPixel: Int, photometric: Int32,
        tile: Int = 0, orientation: Int = 1
    ) throws -> [UInt8] {
        try samples.withUnsafeBytes { raw in
            try tiff(
                raw.baseAddress, width: width, height: height, samplesPerPixel: samplesPerPixel, bits: 16,
                photometric: photometric, compression: Compression.deflate, extraSample: 0, tile: tile,
                orientation: orientation, pages: 1, icc: [])
        }
    }

    private static func tiff(
        _ samples: UnsafeRawPointer?, width: Int, height: Int, samplesPerPixel: Int, bits: Int,
        photometric: Int32, compression: Int32, extraSample: Int32, tile: Int, orientation: Int,
        pages: Int, icc: [UInt8], separatePlanes: Bool = false
    ) throws -> [UInt8] {
        try icc.withUnsafeBufferPointer { profile in
            var layout = sw_test_tiff_layout(
                width: Int32(width), height: Int32(height), samples: Int32(samplesPerPixel), bits: Int32(bits),
                photometric: photometric, compression: compression, extra_sample: extraSample, tile: Int32(tile),
                rows_per_strip: 5, orientation: Int32(orientation), pages: Int32(pages),
                icc: profile.isEmpty ? nil : profile.baseAddress, icc_size: profile.count,
                separate: separatePlanes ? 1 : 0)
            var size = 0
            return try take(sw_test_tiff(samples, &layout, &size), size, "TIFF")
        }
    }

    /// A GIF of `indices` into `palette` (RGB triples).
    static func gif(
        _ indices: [UInt8], width: Int, height: Int, palette: [UInt8], transparent: Int = -1,
        interlaced: Bool = false, frames: Int = 1
    ) throws -> [UInt8] {
        var size = 0
        let bytes = sw_test_gif(
            indices, Int32(width), Int32(height), palette, Int32(palette.count / 3), Int32(transparent),
            interlaced ? 1 : 0, Int32(frames), &size)
        return try take(bytes, size, "GIF")
    }

    /// A HEIC of `image` (RGB or RGBA), with `icc` and `exif` when given.
    static func heic(_ image: ImageBuffer, icc: [UInt8] = [], exif: [UInt8] = []) throws -> [UInt8] {
        var size = 0
        let bytes = image.pixels.withUnsafeBufferPointer { pixels in
            icc.withUnsafeBufferPointer { icc in
                exif.withUnsafeBufferPointer { exif in
                    sw_test_heic(
                        pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels),
                        icc.isEmpty ? nil : icc.baseAddress, icc.count, exif.isEmpty ? nil : exif.baseAddress,
                        exif.count, &size)
                }
            }
        }
        return try take(bytes, size, "HEIC")
    }

    private static func take(_ bytes: UnsafeMutablePointer<UInt8>?, _ size: Int, _ what: String) throws -> [UInt8] {
        guard let bytes else { throw ImagingError(.processing, "the test could not write its \(what) sample") }
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: size))
    }

    // MARK: BMP

    private static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255)] }
    private static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    /// A BMP with a `headerSize`-byte header (40, 108 or 124; 12 for OS/2) of `bits` per pixel: `rows` are its pixel
    /// rows as stored, top row first (each padded here to 4 bytes), written bottom-up unless `topDown`. `masks`
    /// (R, G, B, A) make it BI_BITFIELDS; `palette` is BGR0 quads (BGR triples for a 12-byte header).
    static func bmp(
        width: Int, rows: [[UInt8]], bits: Int, headerSize: Int = 40, topDown: Bool = false,
        masks: [Int]? = nil, palette: [UInt8] = [], compression: Int? = nil, icc: [UInt8] = []
    ) -> [UInt8] {
        let height = rows.count
        let stride = (width * bits + 31) / 32 * 4
        var header: [UInt8]
        if headerSize == 12 {
            header = le32(12) + le16(width) + le16(height) + le16(1) + le16(bits)
        } else {
            let kind = compression ?? (masks == nil ? 0 : 3)
            header =
                le32(headerSize) + le32(width) + le32(topDown ? -height : height) + le16(1) + le16(bits) + le32(kind)
                + le32(stride * height) + le32(2835) + le32(2835) + le32(palette.count / 4) + le32(0)
            if headerSize >= 52 { header += (masks ?? [0, 0, 0, 0]).prefix(4).flatMap { le32($0) } }
            if headerSize >= 108 {
                header += Array("BGRs".utf8.reversed()) + [UInt8](repeating: 0, count: 36) + le32(0) + le32(0) + le32(0)
            }
            if headerSize == 124 { header += le32(4) + le32(0) + le32(0) + le32(0) }
        }
        let extraMasks = headerSize == 40 ? (masks.map { Array($0.prefix(3)) } ?? []).flatMap { le32($0) } : []
        let pixelOffset = 14 + header.count + extraMasks.count + palette.count
        if headerSize == 124, !icc.isEmpty {
            // bV5CSType 'MBED', the profile after the pixels (its offset counts from the header's start).
            header.replaceSubrange(56..<60, with: le32(0x4D42_4544))
            header.replaceSubrange(112..<116, with: le32(pixelOffset + stride * height - 14))
            header.replaceSubrange(116..<120, with: le32(icc.count))
        }
        var pixels: [UInt8] = []
        for row in (topDown ? rows : rows.reversed()) {
            pixels += row.prefix(stride) + [UInt8](repeating: 0, count: max(0, stride - row.count))
        }
        let total = pixelOffset + pixels.count + icc.count
        return Array("BM".utf8) + le32(total) + le32(0) + le32(pixelOffset) + header + extraMasks + palette + pixels
            + icc
    }

    /// The pipeline's output decoded back, with the warnings (`format` nil: the default output).
    static func process(
        _ data: [UInt8], format: ImageFormat? = .png
    ) throws -> (image: ImageBuffer, result: ProcessedImage) {
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        let result = try TiltShiftPipeline.process(
            data, parameters: parameters, encoding: EncodingOptions(format: format))
        return (try ImageCodec.decode(result.data).image, result)
    }
}
