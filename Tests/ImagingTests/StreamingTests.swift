import Foundation
import XCTest

@testable import Imaging

/// The filter works in strips (`StripBlender`): its memory is a window of rows, and the result must still
/// be the recipe's, whatever the height, the threads and the SIMD variant.
final class StreamingTests: XCTestCase {
    /// A tall image (the photograph's left 128 columns, stacked four times): many strips at σ = 4.
    private func tallPhoto() throws -> ImageBuffer {
        let photo = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        let width = 128
        var pixels: [UInt8] = []
        for copy in 0..<4 {
            for y in 0..<photo.height {
                let row = copy % 2 == 0 ? y : photo.height - 1 - y  // mirrored every other copy: no seams
                let start = row * photo.rowBytes
                pixels += photo.pixels[start..<(start + width * photo.channels)]
            }
        }
        return try ImageBuffer(width: width, height: 4 * photo.height, channels: photo.channels, pixels: pixels)
    }

    func testStripsMatchTheExactRecipeOnATallImage() throws {
        let image = try tallPhoto()
        let parameters = TiltShiftParameters(blurRadius: 4)
        let blender = StripBlender(
            width: image.width, height: image.height, channels: 3, sigma: 4,
            weights: [Float](repeating: 1, count: image.height), threads: 1, token: .never)
        XCTAssertLessThan(blender.capacity * 4, image.height, "the test must cover several strips")
        for weights in [
            [Float](repeating: 1, count: image.height),
            TiltShiftMask.weights(height: image.height, parameters: parameters),
        ] {
            let reference = TestImages.exactTiltShift(image, sigma: 4, weights: weights)
            var output = image
            try GaussianBlur.blendInPlace(
                &output, sigma: 4, rowWeights: weights, threads: 1, kernels: .automatic, token: .never)
            let psnr = TestImages.psnr(output, reference)
            print("strips vs exact recipe, σ = 4, \(image.width)×\(image.height): PSNR \(psnr) dB")
            XCTAssertGreaterThanOrEqual(psnr, 45)
        }
    }

    func testStripsDoNotDependOnThreads() throws {
        let image = try tallPhoto()
        let parameters = TiltShiftParameters(blurRadius: 4)
        let one = try TiltShiftFilter.apply(to: image, parameters: parameters, threads: 1)
        XCTAssertEqual(one, try TiltShiftFilter.apply(to: image, parameters: parameters, threads: 3))
    }

    func testTheWindowIsBoundedByTheWidthNotTheHeight() {
        func window(height: Int) -> Int {
            StripBlender(
                width: 12000, height: height, channels: 3, sigma: 10,
                weights: [Float](repeating: 1, count: height), threads: 1, token: .never
            ).windowBytes
        }
        let large = window(height: 12000)
        XCTAssertEqual(large, window(height: 30000))
        XCTAssertLessThanOrEqual(large, 100 << 20, "\(large) bytes for a 12000×12000 RGB image")
        print("window for 12000-pixel-wide RGB at σ = 10: \(large >> 20) MiB")
    }

    func testBaselineAndAVX2KernelsAgreeWithinOneLevel() throws {
        guard KernelVariant.cpuHasAVX2 else { throw XCTSkip("this CPU has no AVX2 + FMA") }
        // σ 3: the exact kernel (`StripBlender.exactSigmaLimit`); σ 5: the recursive one.
        for sigma in [3.0, 5.0] {
            for channels in [1, 3, 4] {
                for (width, height) in [(301, 517), (16, 40), (5, 3)] {
                    let image = TestImages.noise(
                        width: width, height: height, channels: channels, seed: UInt64(channels))
                    let weights = TiltShiftMask.weights(height: height, parameters: .coreImage)
                    var baseline = image
                    var avx2 = image
                    try GaussianBlur.blendInPlace(
                        &baseline, sigma: sigma, rowWeights: weights, threads: 1, kernels: .baseline, token: .never)
                    try GaussianBlur.blendInPlace(
                        &avx2, sigma: sigma, rowWeights: weights, threads: 1, kernels: .avx2, token: .never)
                    XCTAssertLessThanOrEqual(
                        TestImages.maxDifference(baseline, avx2), 1, "σ \(sigma), \(width)×\(height)×\(channels)")
                    XCTAssertNotEqual(baseline, image)
                }
            }
        }
    }

    func testFileToFileEqualsInMemory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-streaming-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = try tallPhoto()
        for format in [ImageFormat.jpeg, .png] {
            let data = try ImageCodec.encode(image, as: format)
            let input = directory.appendingPathComponent("in.\(format.fileExtension)").path
            let output = directory.appendingPathComponent("out.\(format.fileExtension)").path
            try Data(data).write(to: URL(fileURLWithPath: input))
            let inMemory = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
            var timings = PipelineTimings()
            let streamed = try TiltShiftPipeline.process(
                file: input, to: output, parameters: .coreImage,
                encoding: EncodingOptions(), timings: &timings)
            XCTAssertEqual(streamed.format, format)
            XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))), inMemory.data, "\(format)")
        }
    }

    func testTheFastPNGEncoderRoundTripsOverManyChunks() throws {
        // Noise does not compress: 1.4 MB of IDAT data, several chunks of 256 KB.
        let image = TestImages.noise(width: 700, height: 500, channels: 4, seed: 9)
        let fast = try PNGCodec.encode(image, compressionLevel: 3)
        XCTAssertEqual(try PNGCodec.decode(fast), image)
        let chunks = (0..<(fast.count - 4)).filter {
            fast[$0] == 0x49 && fast[$0 + 1] == 0x44 && fast[$0 + 2] == 0x41 && fast[$0 + 3] == 0x54
        }
        XCTAssertGreaterThan(chunks.count, 4, "IDAT chunks")
        // A photograph: within a few per cent of zlib's size at the same level (libpng at level 4 for comparison).
        let photo = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        let ours = try PNGCodec.encode(photo, compressionLevel: 3).count
        let zlib = try PNGCodec.encode(photo, compressionLevel: 4).count
        XCTAssertLessThan(Double(ours), 1.15 * Double(zlib), "\(ours) vs \(zlib) bytes")
        XCTAssertEqual(try PNGCodec.decode(PNGCodec.encode(photo, compressionLevel: 1)), photo)
    }

    func testAFailedFileRunLeavesNoOutput() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shiftwork-streaming-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try TestImages.fixturePath("truncated.jpg")
        let output = directory.appendingPathComponent("out.jpg").path
        var timings = PipelineTimings()
        XCTAssertThrowsError(
            try TiltShiftPipeline.process(
                file: input, to: output, parameters: .coreImage,
                encoding: EncodingOptions(), timings: &timings)
        ) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
