import CImageCodecs
import XCTest

@testable import Imaging

/// Metadata survives the tilt-shift: the ICC profile (so that an Adobe RGB photo keeps its colours), EXIF
/// with its orientation reset to 1 (the pixels are written upright), XMP and IPTC; `.strip` keeps only the
/// profile. The profile and the photos are made here.
final class MetadataTests: XCTestCase {
    private let noBlur = TiltShiftParameters(blurRadius: 0)

    /// An Adobe RGB (1998) display profile: matrix (the Adobe primaries, D50-adapted) and a gamma of 563/256.
    static func adobeRGBProfile() -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
        }
        func s15(_ x: Double) -> [UInt8] { be32(UInt32(bitPattern: Int32((x * 65536).rounded()))) }
        func xyz(_ x: Double, _ y: Double, _ z: Double) -> [UInt8] {
            Array("XYZ ".utf8) + [0, 0, 0, 0] + s15(x) + s15(y) + s15(z)
        }
        let curve: [UInt8] = Array("curv".utf8) + [0, 0, 0, 0] + be32(1) + [0x02, 0x33, 0, 0]  // gamma 563/256
        let text = "Adobe RGB (1998) compatible, made by MetadataTests"
        let description: [UInt8] =
            Array("desc".utf8) + [0, 0, 0, 0] + be32(UInt32(text.utf8.count + 1)) + Array(text.utf8) + [0]
            + [UInt8](repeating: 0, count: 12 + 67)
        let copyright: [UInt8] = Array("text".utf8) + [0, 0, 0, 0] + Array("No copyright".utf8) + [0]
        let tags: [(String, [UInt8])] = [
            ("desc", description), ("cprt", copyright), ("wtpt", xyz(0.9642, 1.0, 0.8249)),
            ("rXYZ", xyz(0.6097, 0.3111, 0.0195)), ("gXYZ", xyz(0.2053, 0.6257, 0.0609)),
            ("bXYZ", xyz(0.1492, 0.0632, 0.7446)),
            ("rTRC", curve), ("gTRC", curve), ("bTRC", curve),
        ]
        var offset = 128 + 4 + 12 * tags.count
        var table = be32(UInt32(tags.count))
        var data: [UInt8] = []
        for (signature, bytes) in tags {
            let padded = bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
            table += Array(signature.utf8) + be32(UInt32(offset)) + be32(UInt32(bytes.count))
            data += padded
            offset += padded.count
        }
        var header = [UInt8](repeating: 0, count: 128)
        header.replaceSubrange(0..<4, with: be32(UInt32(offset)))
        header.replaceSubrange(8..<12, with: [0x02, 0x10, 0, 0])  // version 2.1
        header.replaceSubrange(12..<16, with: Array("mntr".utf8))
        header.replaceSubrange(16..<20, with: Array("RGB ".utf8))
        header.replaceSubrange(20..<24, with: Array("XYZ ".utf8))
        header.replaceSubrange(24..<36, with: [0x07, 0xCE, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])  // 1998-01-01
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        header.replaceSubrange(68..<80, with: s15(0.9642) + s15(1.0) + s15(0.8249))  // D50 illuminant
        return header + table + data
    }

    /// EXIF (a big-endian TIFF structure) with an orientation, a make and a model.
    static func exif(orientation: Int) -> [UInt8] {
        let make = Array("Shiftwork\0".utf8)
        let model = Array("MetadataTests\0".utf8)
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 255), UInt8(v & 255)] }
        func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
        let entries = 3
        let dataStart = 8 + 2 + 12 * entries + 4
        var ifd = be16(entries)
        ifd += be16(0x010F) + be16(2) + be32(make.count) + be32(dataStart)
        ifd += be16(0x0110) + be16(2) + be32(model.count) + be32(dataStart + make.count)
        ifd += be16(0x0112) + be16(3) + be32(1) + be16(orientation) + be16(0)
        return Array("MM".utf8) + [0, 42] + be32(8) + ifd + be32(0) + make + model
    }

    private let xmp = Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF/></x:xmpmeta>".utf8)

    /// The test photo as an Adobe RGB JPEG with EXIF (`orientation`) and XMP.
    private func adobeRGBPhoto(orientation: Int = 1) throws -> [UInt8] {
        let photo = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        var metadata = ImageMetadata()
        metadata.icc = Self.adobeRGBProfile()
        metadata.exif = Self.exif(orientation: orientation)
        metadata.xmp = xmp
        let encoder = try JPEGRowEncoder(
            width: photo.width, height: photo.height, channels: 3, quality: 92,
            metadata: metadata, destination: .memory)
        return try encoder.encode(photo, token: .never)
    }

    static func metadata(of data: [UInt8]) throws -> ImageMetadata {
        try data.withUnsafeBufferPointer { bytes -> ImageMetadata in
            switch ImageFormat(sniffing: data) {
            case .jpeg?: return try JPEGRowDecoder(.memory(bytes), limits: .default).metadata
            case .png?: return try PNGRowDecoder(.memory(bytes), limits: .default).metadata
            case .tiff?: return try TIFFRowDecoder(.memory(bytes), limits: .default).metadata
            case .bmp?: return try BMPRowDecoder(.memory(bytes), limits: .default).metadata
            case let format?: return try WholePictureDecoder(format, .memory(bytes), limits: .default).metadata
            // Output of the code under test that is no image is its failure, never a reason to skip.
            case nil: throw NotAnImage(leadingBytes: Array(data.prefix(16)), count: data.count)
            }
        }
    }

    func testTheProfileAndMetadataSurviveEveryPath() throws {
        let jpeg = try adobeRGBPhoto()
        let input = try Self.metadata(of: jpeg)
        XCTAssertEqual(input.icc, Self.adobeRGBProfile())
        XCTAssertEqual(input.xmp, xmp)
        // JPEG -> JPEG (planar and RGB), JPEG -> PNG (fast and zlib levels), PNG -> JPEG, PNG -> PNG.
        var outputs: [(String, [UInt8])] = []
        for planes in [true, false] {
            var timings = PipelineTimings()
            outputs.append(
                (
                    "JPEG -> JPEG, planes \(planes)",
                    try TiltShiftPipeline.process(
                        jpeg, parameters: .coreImage, encoding: EncodingOptions(), jpegPlanes: planes, timings: &timings
                    ).data
                ))
        }
        for level in [3, 6] {
            let png = try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage,
                encoding: EncodingOptions(format: .png, pngCompressionLevel: level)
            ).data
            outputs.append(("JPEG -> PNG level \(level)", png))
            outputs.append(
                (
                    "PNG -> JPEG",
                    try TiltShiftPipeline.process(
                        png, parameters: .coreImage,
                        encoding: EncodingOptions(format: .jpeg)
                    ).data
                ))
            outputs.append(
                (
                    "PNG -> PNG",
                    try TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions()).data
                ))
        }
        for (path, data) in outputs {
            let output = try Self.metadata(of: data)
            XCTAssertEqual(output.icc, Self.adobeRGBProfile(), "\(path): ICC profile")
            XCTAssertEqual(output.exif, Self.exif(orientation: 1), "\(path): EXIF")
            if ImageFormat(sniffing: data) == .jpeg, !path.hasPrefix("PNG") {
                XCTAssertEqual(output.xmp, xmp, "\(path): XMP")
            }
        }
    }

    func testStripKeepsOnlyTheProfile() throws {
        let jpeg = try adobeRGBPhoto(orientation: 6)
        for format in [ImageFormat.jpeg, .png] {
            let data = try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage,
                encoding: EncodingOptions(format: format, metadata: .strip)
            ).data
            let output = try Self.metadata(of: data)
            XCTAssertEqual(
                output,
                {
                    var m = ImageMetadata()
                    m.icc = Self.adobeRGBProfile()
                    return m
                }(), "\(format)")
        }
    }

    func testEveryOrientationIsAppliedAndResetToOne() throws {
        let upright = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        // The inverse of each orientation: stored so that applying `orientation` gives the upright photo.
        let inverse = [1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 8, 7: 7, 8: 6]
        for orientation in 1...8 {
            guard let stored = inverse[orientation] else { continue }
            let image = upright.oriented(exifOrientation: stored)
            // Our encoder writes orientation 1 (its pixels are upright): the APP1 segment goes in by hand.
            let plain = try JPEGCodec.encode(image, quality: 95)
            let app1 = Array("Exif\0\0".utf8) + Self.exif(orientation: orientation)
            let jpeg =
                Array(plain[0..<2]) + [0xFF, 0xE1, UInt8((app1.count + 2) >> 8), UInt8((app1.count + 2) & 255)]
                + app1 + Array(plain[2...])
            let output = try TiltShiftPipeline.process(
                jpeg, parameters: noBlur, encoding: EncodingOptions(format: .png))
            XCTAssertEqual(
                [output.width, output.height], [upright.width, upright.height], "orientation \(orientation)")
            let decoded = try PNGCodec.decode(output.data)
            XCTAssertLessThan(TestImages.meanDifference(decoded, upright), 3, "orientation \(orientation)")
            let exif = try Self.metadata(of: output.data).exif
            XCTAssertEqual(exif, Self.exif(orientation: 1), "orientation \(orientation)")
            XCTAssertEqual(exif.withUnsafeBufferPointer { sw_exif_orientation_value($0) }, 1)
        }
    }
}

private func sw_exif_orientation_value(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
    guard let base = bytes.baseAddress else { return 0 }
    return Int(sw_exif_orientation(base, bytes.count))
}

/// Bytes that `MetadataTests.metadata(of:)` was asked to read and that no decoder recognises: thrown so that
/// the test fails and says what came instead.
struct NotAnImage: Error, CustomStringConvertible {
    let leadingBytes: [UInt8]
    let count: Int

    var description: String {
        "not an image: \(count) bytes starting \(leadingBytes.map { String($0, radix: 16) }.joined(separator: " "))"
    }
}
