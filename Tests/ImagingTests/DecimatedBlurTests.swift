import Foundation
import XCTest

@testable import Imaging

/// The blur on a halved plane (`DecimatedStripBlender`), which the streaming pipelines use from σ 4 with an
/// upright focus line: held to the exact recipe, streamed in rows of any count, and chosen only where it applies.
final class DecimatedBlurTests: XCTestCase {
    /// Streams `image` through a `DecimatedStripBlender`, `chunk` rows at a time (at most what it has room for).
    private func decimated(
        _ image: ImageBuffer, sigma: Double, weights: [Float], chunk: Int,
        blurInput: ((Int) -> [UInt8])? = nil
    ) throws -> ImageBuffer {
        let blender = DecimatedStripBlender(
            width: image.width, height: image.height, channels: image.channels,
            sigma: sigma, weights: weights, threads: 1, separateBlurInput: blurInput != nil,
            token: .never)
        var output = image
        var lastRow = -1
        let rowBytes = image.rowBytes
        try image.pixels.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            while blender.received < image.height {
                let (space, available) = blender.inputSpace()
                XCTAssertGreaterThan(available, 0, "room for rows")
                let rows = min(available, chunk)
                space.update(from: base + blender.received * rowBytes, count: rows * rowBytes)
                if let blurInput {
                    for r in 0..<rows {
                        blurInput(blender.received + r).withUnsafeBufferPointer {
                            blender.setBlurInput(row: r, from: $0.baseAddress!)
                        }
                    }
                }
                try blender.commit(rows: rows) { finished, count, first in
                    XCTAssertEqual(first, lastRow + 1, "rows come out in order")
                    lastRow = first + count - 1
                    output.pixels.withUnsafeMutableBufferPointer { out in
                        (out.baseAddress! + first * rowBytes).update(from: finished, count: count * rowBytes)
                    }
                }
            }
        }
        XCTAssertEqual(lastRow, image.height - 1, "every row comes out")
        return output
    }

    /// The mean of `image`'s channels, as a gray image.
    private func grayscale(_ image: ImageBuffer) throws -> ImageBuffer {
        var pixels = [UInt8](repeating: 0, count: image.width * image.height)
        for i in 0..<pixels.count {
            let sum = Int(image.pixels[3 * i]) + Int(image.pixels[3 * i + 1]) + Int(image.pixels[3 * i + 2])
            pixels[i] = UInt8(sum / 3)
        }
        return try ImageBuffer(width: image.width, height: image.height, channels: 1, pixels: pixels)
    }

    /// `image` cut to `width` × `height` from its top left.
    private func cropped(_ image: ImageBuffer, width: Int, height: Int) throws -> ImageBuffer {
        var pixels: [UInt8] = []
        for y in 0..<height {
            let start = y * image.rowBytes
            pixels += image.pixels[start..<(start + width * image.channels)]
        }
        return try ImageBuffer(width: width, height: height, channels: image.channels, pixels: pixels)
    }

    /// At least 45 dB against the exact recipe (the floor for the planar path) on photographs, RGB and
    /// gray, even and odd sizes, σ 4 (the limit), 6 and 10, with the mask of the recipe and with weight 1 everywhere.
    func testDecimatedBlurMatchesTheExactRecipe() throws {
        let photo = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        let gray = try grayscale(photo)
        let images = [
            ("photo.jpg", photo),
            ("photo.jpg, odd size", try cropped(photo, width: photo.width - 1, height: photo.height - 3)),
            ("photo.jpg as gray", gray),
        ]
        for (name, image) in images {
            for sigma in [4.0, 6.0, 10.0] {
                let recipe = TiltShiftMask.weights(
                    height: image.height, parameters: TiltShiftParameters(blurRadius: sigma))
                for (maskName, weights) in [
                    ("recipe", recipe), ("all blurred", [Float](repeating: 1, count: image.height)),
                ] {
                    let output = try decimated(image, sigma: sigma, weights: weights, chunk: 7)
                    let psnr = TestImages.psnr(output, TestImages.exactTiltShift(image, sigma: sigma, weights: weights))
                    print(
                        String(
                            format: "decimated blur, %@ %d×%d×%d, σ %.0f, %@: %.2f dB against the exact recipe", name,
                            image.width, image.height, image.channels, sigma, maskName, psnr))
                    XCTAssertGreaterThanOrEqual(psnr, 45, "\(name), σ \(sigma), \(maskName)")
                }
            }
        }
    }

    /// The output does not depend on how many rows each commit brings, and rows of weight 0 pass unchanged.
    func testOutputDoesNotDependOnTheRowsPerCommit() throws {
        let image = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        let weights = TiltShiftMask.weights(height: image.height, parameters: .coreImage)
        let one = try decimated(image, sigma: 10, weights: weights, chunk: 1)
        XCTAssertEqual(one, try decimated(image, sigma: 10, weights: weights, chunk: 16))
        XCTAssertEqual(one, try decimated(image, sigma: 10, weights: weights, chunk: .max))
        for y in 0..<image.height where weights[y] == 0 {
            let range = (y * image.rowBytes)..<((y + 1) * image.rowBytes)
            XCTAssertEqual(Array(one.pixels[range]), Array(image.pixels[range]), "row \(y) has weight 0")
        }
    }

    /// Rows given other values to blur (`setBlurInput`, as the planar path's clipping correction does) are halved
    /// from those: the same values give the same output, a brighter blur input a brighter blurred region.
    func testSeparateBlurInputIsWhatIsBlurred() throws {
        let image = try grayscale(try ImageCodec.decode(TestImages.fixture("photo.jpg")).image)
        let weights = [Float](repeating: 1, count: image.height)
        let plain = try decimated(image, sigma: 6, weights: weights, chunk: 5)
        let row = { (y: Int) in Array(image.pixels[(y * image.rowBytes)..<((y + 1) * image.rowBytes)]) }
        XCTAssertEqual(plain, try decimated(image, sigma: 6, weights: weights, chunk: 5, blurInput: row))
        let brighter = try decimated(
            image, sigma: 6, weights: weights, chunk: 5, blurInput: { y in row(y).map { $0 / 2 + 128 } })
        XCTAssertGreaterThan(brighter.pixels.map(Int.init).reduce(0, +), plain.pixels.map(Int.init).reduce(0, +))
    }

    /// `StreamingBlenders.make` halves only where it applies: upright focus line, one level, gray or RGB, σ ≥ 4
    /// along both axes, planes of at least 256 pixels each way, and not when asked for the exact blur.
    func testTheHalvedPlaneIsChosenOnlyWhereItApplies() {
        func make(
            width: Int = 400, height: Int = 300, channels: Int = 3, sigma: Double = 10, verticalSigma: Double? = nil,
            mask: BlendMask? = nil, levels: Int = 1, decimate: Bool = true
        ) -> any StreamingBlender {
            StreamingBlenders.make(
                width: width, height: height, channels: channels, sigma: sigma, verticalSigma: verticalSigma,
                mask: mask ?? .rows([Float](repeating: 1, count: height)), levels: levels, threads: 1,
                kernels: .automatic, decimate: decimate, token: .never)
        }
        XCTAssertTrue(make() is DecimatedStripBlender)
        XCTAssertTrue(make(channels: 1, sigma: 4) is DecimatedStripBlender)
        XCTAssertTrue(make(sigma: 3.9) is StripBlender, "below the limit")
        XCTAssertTrue(make(sigma: 10, verticalSigma: 3) is StripBlender, "below the limit along y")
        XCTAssertTrue(make(channels: 4) is StripBlender, "RGBA")
        XCTAssertTrue(make(levels: 3) is StripBlender, "progressive falloff")
        XCTAssertTrue(make(decimate: false) is StripBlender, "the exact blur asked for")
        XCTAssertTrue(make(width: 255) is StripBlender, "a plane narrower than 256")
        XCTAssertTrue(make(width: 48, height: 32) is StripBlender, "a small image")
        let turned = TiltShiftMask.mask(width: 400, height: 300, parameters: TiltShiftParameters(angle: 30))
        XCTAssertTrue(make(mask: turned) is StripBlender, "a turned focus line")
    }
}
