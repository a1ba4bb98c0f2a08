import Foundation
import XCTest

@testable import Imaging

/// The focus line at an angle (`TiltShiftParameters.angle`): 0° is today's path to the bit, 90° is the 0°
/// result of the transposed image, and every angle holds to the exact recipe (`TestImages.exactRecipe`).
final class FocusAngleTests: XCTestCase {
    private func photo() throws -> ImageBuffer {
        try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
    }

    private func parameters(
        angle: Double, sigma: Double = 10, falloff: TiltShiftFalloff = .blend
    ) -> TiltShiftParameters {
        TiltShiftParameters(
            focusPosition: 0.45, sharpBand: 0.1, transition: 0.3, blurRadius: sigma, angle: angle,
            falloff: falloff)
    }

    func testZeroDegreesTakesTheRowPathAndFullTurnsAreZero() throws {
        let image = try photo()
        let recipe = parameters(angle: 0)
        guard case .rows(let weights) = TiltShiftMask.mask(width: image.width, height: image.height, parameters: recipe)
        else {
            return XCTFail("0° must weight row by row")
        }
        XCTAssertEqual(weights, TiltShiftMask.weights(height: image.height, parameters: recipe))
        // The row-weight entry point (untouched by the angle) and the filter at 0°, 360° and −360°: the same bytes.
        var rows = image
        try CancellationToken.with(nil) { token in
            try GaussianBlur.blendInPlace(
                &rows, sigma: 10, rowWeights: weights, threads: 1, kernels: .automatic, token: token)
        }
        for angle in [0.0, 360, -360] {
            XCTAssertEqual(
                try TiltShiftFilter.apply(to: image, parameters: parameters(angle: angle)), rows, "\(angle)°")
        }
    }

    func testTheGoldenFilesAreMatchedToTheBitAtZeroDegrees() throws {
        // The golden files were made before the angle existed; on a machine like the one that made them (the
        // same SIMD variant) the 0° path still gives their exact bytes.
        let input = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        let golden = try PNGCodec.decode(TestImages.fixture("golden-photo-coreimage.png"))
        let output = try TiltShiftFilter.apply(to: input, parameters: TiltShiftParameters(angle: 0))
        let difference = TestImages.maxDifference(golden, output)
        print("0°: largest difference from the golden file made before the angle existed: \(difference)")
        XCTAssertLessThanOrEqual(difference, 1)
    }

    func testNinetyDegreesIsTheTransposedImageAtZero() throws {
        let photo = try photo()
        let images = [
            photo, TestImages.pattern(width: 90, height: 61, channels: 1),
            TestImages.pattern(width: 77, height: 52, channels: 4),
        ]
        for image in images {
            for sigma in [2.0, 10.0] {  // the exact kernel and the recursive filter
                let turned = try TiltShiftFilter.apply(to: image, parameters: parameters(angle: 90, sigma: sigma))
                let reference = TestImages.transposed(
                    try TiltShiftFilter.apply(
                        to: TestImages.transposed(image), parameters: parameters(angle: 0, sigma: sigma)))
                let difference = TestImages.maxDifference(turned, reference)
                let psnr = TestImages.psnr(turned, reference)
                print(
                    "90° vs 0° transposed, \(image.width)×\(image.height)×\(image.channels), σ \(sigma): largest difference \(difference), PSNR \(psnr) dB"
                )
                XCTAssertLessThanOrEqual(difference, 1, "\(image.channels) channels, σ \(sigma)")
                XCTAssertGreaterThan(psnr, 55, "\(image.channels) channels, σ \(sigma)")
            }
        }
    }

    func testTheWeightsAtNinetyDegreesAreTheTransposedRowWeights() {
        let recipe = parameters(angle: 90)
        let columns = TiltShiftMask.weights(height: 70, parameters: recipe)
        for x in 0..<70 {
            for y in [0, 13, 39] {
                XCTAssertEqual(
                    TiltShiftMask.weight(x: Double(x), y: Double(y), width: 70, height: 40, parameters: recipe),
                    columns[x], "x \(x), y \(y)")
            }
        }
        guard case .line(let line) = TiltShiftMask.mask(width: 70, height: 40, parameters: recipe) else {
            return XCTFail("90° must weight pixel by pixel")
        }
        var row = [Float](repeating: -1, count: 70 * 3)
        row.withUnsafeMutableBufferPointer { line.fill(row: 17, into: $0.baseAddress!, samples: 0..<210, channels: 3) }
        for (sample, weight) in row.enumerated() {
            XCTAssertEqual(weight, columns[sample / 3], accuracy: 1e-6, "sample \(sample)")
        }
    }

    func testEveryAngleHoldsToTheExactRecipe() throws {
        let image = try photo()
        for angle in [30.0, -45, 120, 180, 250] {
            let recipe = parameters(angle: angle)
            let output = try TiltShiftFilter.apply(to: image, parameters: recipe)
            let psnr = TestImages.psnr(output, TestImages.exactRecipe(image, parameters: recipe))
            print(String(format: "angle %.0f°, σ 10, blend: PSNR %.2f dB against the exact recipe", angle, psnr))
            XCTAssertGreaterThanOrEqual(psnr, 40, "\(angle)°")
        }
    }

    func testRGBAAndGrayAtAnAngleHoldToTheExactRecipe() throws {
        for channels in [1, 4] {
            let image = TestImages.pattern(width: 83, height: 57, channels: channels, seed: 3)
            for sigma in [2.0, 6.0] {
                let recipe = parameters(angle: 35, sigma: sigma)
                let output = try TiltShiftFilter.apply(to: image, parameters: recipe)
                let psnr = TestImages.psnr(output, TestImages.exactRecipe(image, parameters: recipe))
                XCTAssertGreaterThanOrEqual(psnr, 40, "\(channels) channels, σ \(sigma)")
            }
        }
    }

    func testTheTurnedLineKeepsItsOwnPixelsSharp() throws {
        // Along the focus line (band 0.1) the output is the input; far from it, blurred.
        let image = try photo()
        let recipe = parameters(angle: 30)
        let output = try TiltShiftFilter.apply(to: image, parameters: recipe)
        var sharp = 0
        var changedFar = 0
        var far = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let m = TiltShiftMask.weight(
                    x: Double(x), y: Double(y), width: image.width, height: image.height, parameters: recipe)
                if m == 0 {
                    sharp += 1
                    for c in 0..<3 { XCTAssertEqual(output[x, y, c], image[x, y, c]) }
                } else if m == 1 {
                    far += 1
                    if (0..<3).contains(where: { output[x, y, $0] != image[x, y, $0] }) { changedFar += 1 }
                }
            }
        }
        XCTAssertGreaterThan(sharp, image.width * 10)
        XCTAssertGreaterThan(Double(changedFar), 0.8 * Double(far))
    }

    func testTheResultDoesNotDependOnThreads() throws {
        let image = try photo()
        for falloff in TiltShiftFalloff.allCases {
            let recipe = parameters(angle: 30, falloff: falloff)
            let one = try TiltShiftFilter.apply(to: image, parameters: recipe, threads: 1)
            XCTAssertEqual(try TiltShiftFilter.apply(to: image, parameters: recipe, threads: 3), one, "\(falloff)")
        }
    }

    func testTheStreamingPipelineAndThePlanarJPEGPathHoldToTheExactRecipe() throws {
        let jpeg = try TestImages.fixture("photo.jpg")
        let decoded = try JPEGCodec.decode(jpeg)
        for falloff in TiltShiftFalloff.allCases {
            let recipe = parameters(angle: 30, falloff: falloff)
            let reference = TestImages.exactRecipe(decoded, parameters: recipe)
            for planes in [true, false] {
                var timings = PipelineTimings()
                let output = try TiltShiftPipeline.process(
                    jpeg, parameters: recipe, encoding: EncodingOptions(jpegQuality: 100),
                    jpegPlanes: planes, timings: &timings)
                let psnr = TestImages.psnr(try JPEGCodec.decode(output.data), reference)
                print(
                    String(
                        format: "JPEG at 30°, %@, %@ path: PSNR %.2f dB against the exact recipe (quality 100)",
                        falloff.rawValue, planes ? "planar" : "RGB", psnr))
                XCTAssertGreaterThanOrEqual(psnr, 40, "\(falloff), planes \(planes)")
            }
            // PNG: lossless, so the streaming path alone.
            let png = try PNGCodec.encode(decoded)
            let output = try TiltShiftPipeline.process(png, parameters: recipe, encoding: EncodingOptions())
            let psnr = TestImages.psnr(try PNGCodec.decode(output.data), reference)
            XCTAssertGreaterThanOrEqual(psnr, 40, "\(falloff), PNG")
        }
    }

    func testAnglesOutOfRangeAreRefusedNamingTheAngle() {
        for angle in [Double.nan, .infinity, 360.5, -400] {
            XCTAssertThrowsError(try TiltShiftParameters(angle: angle).validated()) { error in
                XCTAssertTrue("\(error)".contains("angle (degrees) must be between -360.0 and 360.0"), "\(error)")
            }
        }
        XCTAssertNoThrow(try TiltShiftParameters(angle: -360).validated())
    }
}
