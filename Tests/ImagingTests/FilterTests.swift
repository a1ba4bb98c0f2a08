import XCTest

@testable import Imaging

final class FilterTests: XCTestCase {
    private func photo() throws -> ImageBuffer {
        try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
    }

    func testFocusLineIsUnchangedAndTopAndBottomAreBlurred() throws {
        let image = try photo()
        let output = try TiltShiftFilter.apply(to: image, parameters: .coreImage)
        XCTAssertEqual(output.width, image.width)
        XCTAssertEqual(output.height, image.height)
        // The focus line (mid-height) is the original, within one level.
        let focus = image.height / 2
        for i in 0..<image.rowBytes {
            let a = Int(image.pixels[focus * image.rowBytes + i])
            let b = Int(output.pixels[focus * image.rowBytes + i])
            XCTAssertLessThanOrEqual(abs(a - b), 1, "focus row sample \(i)")
        }
        // The top and bottom quarters lose most of their high-frequency energy.
        let quarter = image.height / 4
        for rows in [0..<quarter, (image.height - quarter)..<image.height] {
            let before = TestImages.horizontalEnergy(image, rows: rows)
            let after = TestImages.horizontalEnergy(output, rows: rows)
            XCTAssertLessThan(after, before * 0.2, "rows \(rows): \(after) vs \(before)")
        }
    }

    func testSharpBandKeepsRowsExactly() throws {
        let image = try photo()
        let parameters = TiltShiftParameters(focusPosition: 0.4, sharpBand: 0.2, transition: 0.1, blurRadius: 6)
        let output = try TiltShiftFilter.apply(to: image, parameters: parameters)
        let weights = TiltShiftMask.weights(height: image.height, parameters: parameters)
        var kept = 0
        for y in 0..<image.height where weights[y] == 0 {
            let range = (y * image.rowBytes)..<((y + 1) * image.rowBytes)
            XCTAssertEqual(Array(output.pixels[range]), Array(image.pixels[range]), "row \(y)")
            kept += 1
        }
        XCTAssertGreaterThan(kept, Int(0.19 * Double(image.height)))
    }

    func testMaskFollowsTheRecipe() {
        let weights = TiltShiftMask.weights(height: 100, parameters: .coreImage)
        XCTAssertEqual(weights[50], 0)
        XCTAssertEqual(weights[0], 1)
        XCTAssertEqual(weights[25], 1)
        XCTAssertEqual(weights[75], 1)
        XCTAssertEqual(weights[99], 1)
        XCTAssertEqual(weights[40], 0.4, accuracy: 1e-6)  // 4·|0.4 − 0.5|
        XCTAssertEqual(weights[60], 0.4, accuracy: 1e-6)
    }

    func testBlurMatchesAnExactGaussianOnAPhotograph() throws {
        let image = try photo()
        for sigma in [2.0, 10.0] {
            let weights = [Float](repeating: 1, count: image.height)
            let reference = TestImages.exactTiltShift(image, sigma: sigma, weights: weights)
            let blurred = try GaussianBlur.apply(to: image, sigma: sigma)
            let psnr = TestImages.psnr(blurred, reference)
            print("recursive vs exact Gaussian, σ = \(sigma): PSNR \(psnr) dB")
            XCTAssertGreaterThanOrEqual(psnr, 40, "σ = \(sigma): PSNR \(psnr) dB")
        }
    }

    func testTiltShiftMatchesTheExactRecipe() throws {
        let image = try photo()
        let weights = TiltShiftMask.weights(height: image.height, parameters: .coreImage)
        let reference = TestImages.exactTiltShift(image, sigma: 10, weights: weights)
        let output = try TiltShiftFilter.apply(to: image, parameters: .coreImage)
        let psnr = TestImages.psnr(output, reference)
        print("tilt-shift vs exact recipe: PSNR \(psnr) dB")
        XCTAssertGreaterThanOrEqual(psnr, 40)
    }

    func testConstantImageStaysConstantUpToTheEdges() throws {
        for channels in [1, 3, 4] {
            let image = ImageBuffer(width: 37, height: 23, channels: channels, filledWith: 173)
            let output = try GaussianBlur.apply(to: image, sigma: 5)
            XCTAssertEqual(output, image, "channels \(channels)")
        }
    }

    func testTinyImages() throws {
        for (w, h) in [(1, 1), (1, 7), (7, 1), (2, 2), (3, 5)] {
            let image = TestImages.noise(width: w, height: h, channels: 3)
            let output = try TiltShiftFilter.apply(to: image, parameters: .coreImage)
            XCTAssertEqual(output.width, w)
            XCTAssertEqual(output.height, h)
        }
    }

    func testOutputDoesNotDependOnThreads() throws {
        let image = try photo()
        let one = try TiltShiftFilter.apply(to: image, parameters: .coreImage, threads: 1)
        let three = try TiltShiftFilter.apply(to: image, parameters: .coreImage, threads: 3)
        XCTAssertEqual(one, three)
        XCTAssertEqual(one, try TiltShiftFilter.apply(to: image, parameters: .coreImage, threads: 1))
    }

    func testAlphaIsBlurredPremultipliedWithoutDarkFringes() throws {
        // Left half: opaque red; right half: fully transparent black.
        var image = ImageBuffer(width: 40, height: 10, channels: 4, filledWith: 0)
        for y in 0..<10 {
            for x in 0..<20 {
                image[x, y, 0] = 255
                image[x, y, 3] = 255
            }
        }
        let output = try GaussianBlur.apply(to: image, sigma: 3)
        for x in 15..<30 {
            let alpha = output[x, 5, 3]
            guard alpha > 8 else { continue }
            XCTAssertGreaterThanOrEqual(output[x, 5, 0], 250, "x \(x): red must not darken (alpha \(alpha))")
            XCTAssertLessThanOrEqual(output[x, 5, 1], 2)
        }
        XCTAssertLessThan(output[24, 5, 3], 200)
        XCTAssertGreaterThan(output[24, 5, 3], 10)
    }

    func testInvalidParametersAreRejectedWithAClearMessage() {
        let cases: [(TiltShiftParameters, String)] = [
            (.init(focusPosition: 1.5), "focus position must be between 0.0 and 1.0 (got 1.5)"),
            (.init(sharpBand: -0.1), "sharp band must be between 0.0 and 1.0 (got -0.1)"),
            (.init(transition: .nan), "transition must be between 0.0 and 1.0 (got nan)"),
            (.init(blurRadius: 0.2), "blur radius must be 0 (no blur) or between 0.5 and 500.0 pixels (got 0.2)"),
        ]
        for (parameters, message) in cases {
            XCTAssertThrowsError(try parameters.validated()) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .processing)
                XCTAssertEqual((error as? ImagingError)?.message, message)
            }
        }
        XCTAssertNoThrow(try TiltShiftParameters.coreImage.validated())
        XCTAssertEqual(
            TiltShiftParameters.coreImage,
            TiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10))
    }

    func testCancellationStopsTheFilter() async throws {
        let image = TestImages.noise(width: 800, height: 600, channels: 3)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try TiltShiftFilter.apply(to: image, parameters: .coreImage)
        }
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, .cancelled)
        }
    }
}
