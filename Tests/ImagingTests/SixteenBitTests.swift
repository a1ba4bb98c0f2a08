import CImageCodecs
import CTestSupport
import Foundation
import XCTest

@testable import Imaging

/// 16 bits kept (issue #32): a 16-bit PNG or TIFF goes through decode, filter and encode at 16 bits, is written at
/// 16 bits as PNG or TIFF and dithered (with a warning) into formats of 8 bits; its metadata is kept, and broken
/// 16-bit files fail as other images do.
final class SixteenBitTests: XCTestCase {
    private typealias S = SixteenBitSamples

    private static let layouts = [(1, "gray"), (2, "gray+alpha"), (3, "RGB"), (4, "RGBA")]

    /// The expected decoded samples of stored ones: gray+alpha is read as RGBA.
    private func decodedSamples(_ samples: [UInt16], channels: Int) -> [UInt16] {
        guard channels == 2 else { return samples }
        return stride(from: 0, to: samples.count, by: 2).flatMap { i in
            [samples[i], samples[i], samples[i], samples[i + 1]]
        }
    }

    func testUnblurredSixteenBitImagesComeOutSampleForSample() throws {
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        for (channels, name) in Self.layouts {
            let (w, h) = (37, 23)
            let samples = S.photo(width: w, height: h, channels: channels)
            for (format, input) in [
                (ImageFormat.png, try S.png(samples, width: w, height: h, channels: channels)),
                (.png, try S.png(samples, width: w, height: h, channels: channels, level: 6)),
                (.tiff, try S.tiff(samples, width: w, height: h, channels: channels == 2 ? 4 : channels)),
            ]
            where !(format == .tiff && channels == 2) {
                let result = try TiltShiftPipeline.process(input, parameters: parameters, encoding: EncodingOptions())
                XCTAssertEqual(result.format, format)
                XCTAssertEqual(result.warnings, [], "\(name) \(format)")
                let output = try S.decode(result.data)
                XCTAssertEqual(output.bits, 16, "\(name) \(format): written at 16 bits")
                XCTAssertEqual(output.samples, decodedSamples(samples, channels: channels), "\(name) \(format)")
            }
        }
    }

    func testSixteenBitPNGAndTIFFKeepTheirDepthThroughTheFilter() throws {
        for (channels, name) in Self.layouts {
            let (w, h) = (64, 48)
            let samples = S.photo(width: w, height: h, channels: channels)
            let png = try S.png(samples, width: w, height: h, channels: channels)
            for format in [ImageFormat.png, .tiff] {
                let result = try TiltShiftPipeline.process(
                    png, parameters: .coreImage, encoding: EncodingOptions(format: format))
                let output = try S.decode(result.data)
                XCTAssertEqual(output.bits, 16, "\(name) → \(format)")
                XCTAssertEqual(output.channels, channels == 2 ? 4 : channels)
                // The focus line's rows (weight 0) are the input's samples, all 16 bits of them.
                let expected = decodedSamples(samples, channels: channels)
                let row = output.width * output.channels
                XCTAssertEqual(
                    Array(output.samples[(h / 2) * row..<(h / 2 + 1) * row]),
                    Array(expected[(h / 2) * row..<(h / 2 + 1) * row]),
                    "\(name) → \(format): the sharp row")
                XCTAssertTrue(
                    output.samples.contains { $0 % 257 != 0 }, "\(name) → \(format): values between 8-bit levels")
                XCTAssertNotEqual(output.samples, expected, "\(name) → \(format): the blurred rows changed")
            }
        }
    }

    /// The 16-bit filter against the recipe computed exactly in Double at 16 bits (PSNR, peak 65535), beside the
    /// 8-bit path on the same photo rounded to 8 bits (its output × 257 against the same reference).
    func testSixteenBitFilterAccuracyAgainstTheExactRecipe() throws {
        let (w, h) = (96, 72)
        var turned = TiltShiftParameters.coreImage
        turned.angle = 30
        var progressive = TiltShiftParameters.coreImage
        progressive.falloff = .progressive
        var small = TiltShiftParameters.coreImage
        small.blurRadius = 3
        let cases: [(String, TiltShiftParameters, Int)] = [
            ("σ 10 RGB", .coreImage, 3), ("σ 3 RGB (exact kernel)", small, 3), ("σ 10 gray", .coreImage, 1),
            ("σ 10 RGBA", .coreImage, 4), ("σ 10 at 30°", turned, 3), ("σ 10 progressive", progressive, 3),
        ]
        for (name, parameters, channels) in cases {
            let samples = S.photo(width: w, height: h, channels: channels)
            let reference = S.exactRecipe(samples, width: w, height: h, channels: channels, parameters: parameters)
            let deep = try S.decode(
                try TiltShiftPipeline.process(
                    S.png(samples, width: w, height: h, channels: channels), parameters: parameters,
                    encoding: EncodingOptions()
                ).data)
            XCTAssertEqual(deep.bits, 16)
            let eight = samples.map { UInt8((Double($0) * 255 / 65535).rounded()) }
            let eightInput = try PNGCodec.encode(ImageBuffer(width: w, height: h, channels: channels, pixels: eight))
            let shallow = try S.decode(
                try TiltShiftPipeline.process(eightInput, parameters: parameters, encoding: EncodingOptions()).data)
            XCTAssertEqual(shallow.bits, 8)
            let deepPSNR = S.psnr(deep.samples, against: reference)
            let shallowPSNR = S.psnr(shallow.samples, scale: 257, against: reference)
            print(
                "16-bit filter, \(name): \(String(format: "%.1f", deepPSNR)) dB at 16 bits, "
                    + "\(String(format: "%.1f", shallowPSNR)) dB through the 8-bit path (peak 65535)")
            XCTAssertGreaterThan(deepPSNR, 40, name)
            XCTAssertGreaterThan(deepPSNR, shallowPSNR, "\(name): 16 bits beat 8")
        }
    }

    /// File to file, the 16-bit image streams (PNG in, TIFF out and back) and comes out as from memory.
    func testFileToFileKeepsSixteenBits() throws {
        let (w, h) = (120, 90)
        let png = try S.png(S.photo(width: w, height: h, channels: 4), width: w, height: h, channels: 4)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sixteen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.png").path
        let output = directory.appendingPathComponent("out.tif").path
        try Data(png).write(to: URL(fileURLWithPath: input))
        var timings = PipelineTimings()
        let result = try TiltShiftPipeline.process(
            file: input, to: output, parameters: .coreImage,
            encoding: EncodingOptions(format: .tiff), timings: &timings)
        XCTAssertEqual(result.warnings, [])
        let written = try S.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        let inMemory = try S.decode(
            TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions(format: .tiff)).data)
        XCTAssertEqual(written.bits, 16)
        XCTAssertEqual(written, inMemory)
    }

    /// As at 8 bits, the output does not depend on the filter's threads (each writes its own columns and rows).
    func testSixteenBitOutputDoesNotDependOnThreads() throws {
        var progressive = TiltShiftParameters.coreImage
        progressive.falloff = .progressive
        progressive.angle = 20
        for (channels, parameters) in [(3, TiltShiftParameters.coreImage), (4, progressive), (1, progressive)] {
            let (w, h) = (150, 400)
            let png = try S.png(
                S.photo(width: w, height: h, channels: channels), width: w, height: h, channels: channels)
            let one = try S.decode(
                TiltShiftPipeline.process(png, parameters: parameters, encoding: EncodingOptions(), threads: 1).data)
            let three = try S.decode(
                TiltShiftPipeline.process(png, parameters: parameters, encoding: EncodingOptions(), threads: 3).data)
            let differing = zip(one.samples, three.samples).enumerated().filter { $0.element.0 != $0.element.1 }
            XCTAssertEqual(
                differing.count, 0,
                "\(channels) channels: first at \(differing.first.map { ($0.offset % (w * channels), $0.offset / (w * channels), $0.element) } as Any)"
            )
        }
    }

    func testSixteenBitsToAnEightBitFormatAreDitheredWithAWarning() throws {
        let (w, h) = (64, 32)
        let samples = S.photo(width: w, height: h, channels: 3)
        let png = try S.png(samples, width: w, height: h, channels: 3)
        for format in [ImageFormat.jpeg, .webp] {
            let result = try TiltShiftPipeline.process(
                png, parameters: .coreImage, encoding: EncodingOptions(format: format))
            XCTAssertEqual(result.format, format)
            XCTAssertEqual(ImageFormat(sniffing: result.data), format)
            XCTAssertTrue(
                result.warnings.contains { $0.contains("16-bit input written as 8-bit") && $0.contains("dithered") },
                "\(format): \(result.warnings)")
        }
        // PNG and TIFF keep 16 bits, AVIF 12: no warning.
        for format in [ImageFormat.tiff, .avif] {
            let kept = try TiltShiftPipeline.process(
                png, parameters: .coreImage, encoding: EncodingOptions(format: format))
            XCTAssertEqual(kept.warnings, [], "\(format)")
        }
    }

    /// A 16-bit input written as AVIF is 12-bit; a 10 or 12-bit AVIF is read at 16 bits, filtered at 16 and written at
    /// its own depth.
    func testAVIFKeepsTenAndTwelveBits() throws {
        let (w, h) = (64, 48)
        let samples = S.photo(width: w, height: h, channels: 3)
        let png = try S.png(samples, width: w, height: h, channels: 3)
        let fromPNG = try S.decode(
            try TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions(format: .avif)).data)
        XCTAssertEqual(fromPNG.bits, 16)
        XCTAssertEqual(fromPNG.sourceBits, 12)
        for depth in [10, 12] {
            for channels in [3, 4] {
                let input = try S.avif(
                    S.photo(width: w, height: h, channels: channels), width: w, height: h, channels: channels,
                    depth: depth)
                let read = try S.decode(input)
                XCTAssertEqual(read.bits, 16, "\(depth)-bit AVIF read at 16 bits")
                XCTAssertEqual(read.sourceBits, depth)
                XCTAssertTrue(read.samples.contains { $0 % 257 != 0 }, "values between 8-bit levels")
                let result = try TiltShiftPipeline.process(input, parameters: .coreImage, encoding: EncodingOptions())
                XCTAssertEqual(result.format, .avif)
                XCTAssertEqual(result.warnings, [])
                let output = try S.decode(result.data)
                XCTAssertEqual(output.sourceBits, depth, "\(depth)-bit AVIF in, \(depth)-bit AVIF out")
                XCTAssertEqual(output.channels, channels)
                // Lossy, but the same picture: the unblurred middle row stays close to the input's.
                let row = w * channels
                let middle = (h / 2) * row
                let error =
                    zip(output.samples[middle..<(middle + row)], read.samples[middle..<(middle + row)])
                    .map { abs(Int($0) - Int($1)) }.reduce(0, +) / row
                XCTAssertLessThan(error, 2000, "\(depth) bits, \(channels) channels: mean error of the sharp row")
            }
        }
    }

    /// A level halfway between two 8-bit levels comes out as both, in about equal shares (truncation or rounding
    /// would give one level everywhere), and a gradient's mean stays the 16-bit mean.
    func testDitheringKeepsTheLevelsBetweenEightBitSteps() throws {
        let (w, h) = (64, 16)
        let half = UInt16(257 * 100 + 128)  // 100.5 on the 8-bit scale
        let flat = [UInt16](repeating: half, count: w * h)
        let encoder = try PNGRowEncoder(width: w, height: h, channels: 1, level: 3, destination: .memory)
        let dithering = DitheringRowEncoder(encoder, width: w, channels: 1)
        let bytes = try CancellationToken.with(nil) { token -> [UInt8] in
            try flat.withUnsafeBytes { raw in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                try dithering.write(base, rows: h, token: token)
            }
            return try dithering.finish(token: token) ?? []
        }
        let output = try S.decode(bytes)
        XCTAssertEqual(output.bits, 8)
        XCTAssertEqual(Set(output.samples), [100, 101])
        let mean = Double(output.samples.reduce(0) { $0 + Int($1) }) / Double(output.samples.count)
        XCTAssertEqual(mean, 100.5, accuracy: 0.05)
        // Exact 8-bit levels stay exact.
        let levels = (0..<(w * h)).map { UInt16(257 * ($0 % 256)) }
        var eight = [UInt8](repeating: 0, count: levels.count)
        sw_dither16_to_8(levels, &eight, levels.count, 1, 0)
        XCTAssertEqual(eight, (0..<(w * h)).map { UInt8($0 % 256) })
    }

    func testMetadataIsKeptAtSixteenBits() throws {
        var metadata = ImageMetadata()
        metadata.icc = MetadataTests.adobeRGBProfile()
        metadata.exif = MetadataTests.exif(orientation: 1)
        let (w, h) = (40, 30)
        let samples = S.photo(width: w, height: h, channels: 3)
        let png = try S.png(samples, width: w, height: h, channels: 3, metadata: metadata)
        for format in [ImageFormat.png, .tiff, .jpeg] {
            let result = try TiltShiftPipeline.process(
                png, parameters: .coreImage, encoding: EncodingOptions(format: format))
            let output = try MetadataTests.metadata(of: result.data)
            XCTAssertEqual(output.icc, metadata.icc, "\(format): ICC profile")
            if format != .tiff { XCTAssertEqual(output.exif, metadata.exif, "\(format): EXIF") }
        }
        var iccOnly = ImageMetadata()
        iccOnly.icc = MetadataTests.adobeRGBProfile()
        let tiff = try S.tiff(samples, width: w, height: h, channels: 3, metadata: iccOnly)
        let result = try TiltShiftPipeline.process(tiff, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(try MetadataTests.metadata(of: result.data).icc, iccOnly.icc)
        XCTAssertEqual(try S.decode(result.data).bits, 16)
    }

    /// A 16-bit TIFF turned by its Orientation tag is turned at 16 bits: the same picture as the 8-bit decoder's, with
    /// all 16 bits.
    func testOrientedSixteenBitTIFFIsTurnedAtSixteenBits() throws {
        let (w, h) = (30, 20)
        let samples = S.photo(width: w, height: h, channels: 3)
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        for orientation in 2...8 {
            let input = try InputFormatSamples.tiff16(
                samples, width: w, height: h, samplesPerPixel: 3,
                photometric: InputFormatSamples.Photometric.rgb, orientation: orientation)
            let eight = try ImageCodec.decode(input).image
            let output = try S.decode(
                try TiltShiftPipeline.process(input, parameters: parameters, encoding: EncodingOptions()).data)
            XCTAssertEqual(output.bits, 16, "orientation \(orientation)")
            XCTAssertEqual([output.width, output.height], [eight.width, eight.height], "orientation \(orientation)")
            XCTAssertEqual(
                output.samples.map { UInt8((Double($0) * 255 / 65535).rounded()) }, eight.pixels,
                "orientation \(orientation)")
            XCTAssertTrue(output.samples.contains { $0 % 257 != 0 })
        }
    }

    /// `--colour srgb` converts a profiled 16-bit RGB image at 16 bits: the output carries no profile, keeps its depth,
    /// and agrees with the 8-bit conversion of the same picture.
    func testSRGBConversionAtSixteenBits() throws {
        var metadata = ImageMetadata()
        metadata.icc = MetadataTests.adobeRGBProfile()
        let (w, h) = (40, 30)
        let samples = S.photo(width: w, height: h, channels: 3)
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        let png = try S.png(samples, width: w, height: h, channels: 3, metadata: metadata)
        let result = try TiltShiftPipeline.process(
            png, parameters: parameters, encoding: EncodingOptions(colour: .srgb))
        XCTAssertEqual(try MetadataTests.metadata(of: result.data).icc, [])
        let deep = try S.decode(result.data)
        XCTAssertEqual(deep.bits, 16)
        XCTAssertNotEqual(deep.samples, samples, "converted")
        let rounded: [UInt8] = samples.map { UInt8((Double($0) * 255 / 65535).rounded()) }
        let encoder = try PNGRowEncoder(
            width: w, height: h, channels: 3, level: 3, metadata: metadata, destination: .memory)
        let eight: [UInt8] = try CancellationToken.with(nil) { token in
            try encoder.encode(ImageBuffer(width: w, height: h, channels: 3, pixels: rounded), token: token)
        }
        let shallow = try S.decode(
            try TiltShiftPipeline.process(eight, parameters: parameters, encoding: EncodingOptions(colour: .srgb)).data)
        XCTAssertEqual(shallow.bits, 8)
        var total = 0.0
        for (d, e) in zip(deep.samples, shallow.samples) { total += abs(Double(d) * 255 / 65535 - Double(e)) }
        let difference = total / Double(samples.count)
        XCTAssertLessThan(difference, 1, "mean difference from the 8-bit conversion, in 8-bit levels")
    }

    func testInterlacedSixteenBitPNGKeepsItsDepth() throws {
        let (w, h) = (33, 21)
        let samples = S.photo(width: w, height: h, channels: 3)
        // libpng writes Adam7 when asked; the project writes no interlaced PNG, so build one with libpng here.
        var size = 0
        let interlaced = try XCTUnwrap(
            samples.withUnsafeBufferPointer { sw_test_png16_interlaced($0.baseAddress, Int32(w), Int32(h), 3, &size) })
        defer { free(interlaced) }
        let bytes = Array(UnsafeBufferPointer(start: interlaced, count: size))
        var parameters = TiltShiftParameters.coreImage
        parameters.blurRadius = 0
        let result = try TiltShiftPipeline.process(bytes, parameters: parameters, encoding: EncodingOptions())
        let output = try S.decode(result.data)
        XCTAssertEqual(output.bits, 16)
        XCTAssertEqual(output.samples, samples)
    }

    func testBrokenSixteenBitFilesFailWithAMessage() throws {
        let (w, h) = (64, 48)
        let samples = S.photo(width: w, height: h, channels: 3)
        for (name, data) in [
            ("PNG", try S.png(samples, width: w, height: h, channels: 3)),
            ("TIFF", try S.tiff(samples, width: w, height: h, channels: 3)),
            ("12-bit AVIF", try S.avif(samples, width: w, height: h, channels: 3, depth: 12)),
        ] {
            // Truncated: the header survives, the rows do not.
            XCTAssertThrowsError(
                try TiltShiftPipeline.process(
                    Array(data.prefix(data.count / 2)), parameters: .coreImage,
                    encoding: EncodingOptions())
            ) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(name): \(error)")
            }
        }
        // A PNG header that claims 100000 × 100000 16-bit pixels is refused before anything is allocated.
        var png = try S.png([0, 0, 0], width: 1, height: 1, channels: 3)
        for offset in [16, 20] { png.replaceSubrange(offset..<(offset + 4), with: [0, 1, 0x86, 0xA0]) }
        let crc = crc32(Array(png[12..<29]))
        png.replaceSubrange(
            29..<33, with: [UInt8(crc >> 24), UInt8((crc >> 16) & 255), UInt8((crc >> 8) & 255), UInt8(crc & 255)])
        XCTAssertThrowsError(try TiltShiftPipeline.process(png, parameters: .coreImage, encoding: EncodingOptions())) {
            error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(error)")
        }
        // A TIFF that claims more rows than its strips hold.
        let tiff = try S.tiff(samples, width: w, height: h, channels: 3)
        let lying = try XCTUnwrap(lyingHeight(tiff, height: UInt32(h * 4)))
        XCTAssertThrowsError(try TiltShiftPipeline.process(lying, parameters: .coreImage, encoding: EncodingOptions()))
        { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
        }
    }

    /// The fuzzer's corpus starts it at the 16-bit decoders too: 16-bit PNGs (gray, gray+alpha, RGB) and TIFFs, read at
    /// 16 bits by `decodeKeepingDepth`, which the fuzzer calls on every input.
    func testTheFuzzCorpusHasSixteenBitSeeds() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/images")
        var deep: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        where !name.hasSuffix("-refused.bmp") {
            let decoded = try ImageCodec.decodeKeepingDepth(
                [UInt8](try Data(contentsOf: corpus.appendingPathComponent(name))))
            if decoded.bitsPerSample == 16 { deep.append(name) }
        }
        XCTAssertEqual(
            deep,
            ["gray-alpha16.png", "gray16.png", "rgb16-tiles-orientation6.tif", "rgb16.png", "rgba16-unassociated.tif"])
    }

    /// PNG's CRC-32 (of a chunk's type and data).
    private func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A little-endian TIFF with its ImageLength tag (257) changed to `height`; nil if the tag is not found.
    private func lyingHeight(_ tiff: [UInt8], height: UInt32) -> [UInt8]? {
        guard tiff.count > 8, tiff[0] == 0x49 else { return nil }
        func u16(_ i: Int) -> Int { Int(tiff[i]) | Int(tiff[i + 1]) << 8 }
        func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
        let directory = u32(4)
        guard directory + 2 <= tiff.count else { return nil }
        var copy = tiff
        for entry in 0..<u16(directory) {
            let at = directory + 2 + 12 * entry
            guard at + 12 <= tiff.count else { return nil }
            if u16(at) == 257 {
                let type = u16(at + 2)
                if type == 3 {
                    copy.replaceSubrange((at + 8)..<(at + 10), with: [UInt8(height & 255), UInt8(height >> 8)])
                } else {
                    copy.replaceSubrange((at + 8)..<(at + 12), with: (0..<4).map { UInt8((height >> (8 * $0)) & 255) })
                }
                return copy
            }
        }
        return nil
    }
}
