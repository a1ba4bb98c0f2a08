import Foundation
import XCTest

@testable import Imaging

/// `TiltShiftFalloff.progressive`: the blur grows with the distance from the sharp band (levels at σ·k/4
/// interpolated by the mask), held to the exact recipe; `.blend` stays today's recipe.
final class ProgressiveFalloffTests: XCTestCase {
    private func photo() throws -> ImageBuffer {
        try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
    }

    func testProgressiveHoldsToTheExactRecipe() throws {
        let image = try photo()
        for sigma in [4.0, 10.0] {
            for angle in [0.0, 30] {
                let recipe = TiltShiftParameters(
                    sharpBand: 0.1, transition: 0.35, blurRadius: sigma, angle: angle,
                    falloff: .progressive)
                let output = try TiltShiftFilter.apply(to: image, parameters: recipe)
                let psnr = TestImages.psnr(output, TestImages.exactRecipe(image, parameters: recipe))
                print(
                    String(
                        format: "progressive, σ %.0f, %.0f°: PSNR %.2f dB against the exact recipe", sigma, angle, psnr)
                )
                XCTAssertGreaterThanOrEqual(psnr, 40, "σ \(sigma), \(angle)°")
            }
        }
    }

    func testBlendIsStillTheExactRecipeOfToday() throws {
        // The reference of the new recipe, for `.blend`, is the reference the filter was always held to.
        let image = try photo()
        let weights = TiltShiftMask.weights(height: image.height, parameters: .coreImage)
        XCTAssertEqual(
            TestImages.exactRecipe(image, parameters: .coreImage),
            TestImages.exactTiltShift(image, sigma: 10, weights: weights))
    }

    func testProgressiveMatchesBlendWhereTheMaskIsZeroOrOne() throws {
        // Sharp rows stay the original, fully blurred rows take the full σ: only the ramp differs.
        let image = try photo()
        let blend = TiltShiftParameters(sharpBand: 0.2, transition: 0.2, blurRadius: 6)
        var progressive = blend
        progressive.falloff = .progressive
        let a = try TiltShiftFilter.apply(to: image, parameters: blend)
        let b = try TiltShiftFilter.apply(to: image, parameters: progressive)
        let weights = TiltShiftMask.weights(height: image.height, parameters: blend)
        var rampDifference = 0
        for y in 0..<image.height {
            let rows = (y * image.rowBytes)..<((y + 1) * image.rowBytes)
            let largest = zip(a.pixels[rows], b.pixels[rows]).map { abs(Int($0) - Int($1)) }.max() ?? 0
            if weights[y] == 0 || weights[y] == 1 {
                XCTAssertLessThanOrEqual(largest, 1, "row \(y), weight \(weights[y])")
            } else {
                rampDifference = max(rampDifference, largest)
            }
        }
        XCTAssertGreaterThan(rampDifference, 4, "the ramp must differ: blur grows instead of blending in")
    }
}
