import Foundation
import XCTest

@testable import Imaging

/// Helpers shared by the Imaging tests: generated images, fixtures, measures of sharpness and error.
enum TestImages {
    /// A smooth, deterministic test pattern (gradients and low-frequency waves) with `channels` channels.
    static func pattern(width: Int, height: Int, channels: Int, seed: Int = 0) -> ImageBuffer {
        var image = ImageBuffer(width: width, height: height, channels: channels)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    let fx = Double(x) / Double(max(1, width - 1))
                    let fy = Double(y) / Double(max(1, height - 1))
                    var v =
                        40 + 150 * (0.5 * fx + 0.3 * fy) + 30 * sin(Double(x + 3 * c + seed) / 9)
                        * cos(Double(y - c) / 13)
                    if c == 3 { v = 255 - 120 * fx }  // alpha: a gradient
                    image[x, y, c] = UInt8(max(0, min(255, v.rounded())))
                }
            }
        }
        return image
    }

    /// Pseudo-random noise (a fixed linear congruential sequence): the worst case for lossless codecs.
    static func noise(width: Int, height: Int, channels: Int, seed: UInt64 = 1) -> ImageBuffer {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var image = ImageBuffer(width: width, height: height, channels: channels)
        for i in 0..<image.pixels.count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            image.pixels[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return image
    }

    static var fixturesURL: URL {
        get throws {
            guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
                // Package.swift copies Tests/ImagingTests/Fixtures into the bundle: without it, fail (never skip).
                throw URLError(.fileDoesNotExist)
            }
            return url
        }
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try fixturesURL.appendingPathComponent(name)
        return [UInt8](try Data(contentsOf: url))
    }

    static func fixturePath(_ name: String) throws -> String {
        try fixturesURL.appendingPathComponent(name).path
    }

    /// Sum of squared differences between horizontally adjacent samples in rows `rows`: high-frequency energy.
    static func horizontalEnergy(_ image: ImageBuffer, rows: Range<Int>) -> Double {
        var total = 0.0
        let c = image.channels
        image.pixels.withUnsafeBufferPointer { p in
            for y in rows {
                let base = y * image.width * c
                for i in 0..<(image.width - 1) * c {
                    let d = Double(p[base + i + c]) - Double(p[base + i])
                    total += d * d
                }
            }
        }
        return total
    }

    /// Peak signal-to-noise ratio in dB between two images of the same geometry (∞ when equal).
    static func psnr(_ a: ImageBuffer, _ b: ImageBuffer) -> Double {
        precondition(a.pixels.count == b.pixels.count)
        var sum = 0.0
        for i in 0..<a.pixels.count {
            let d = Double(a.pixels[i]) - Double(b.pixels[i])
            sum += d * d
        }
        if sum == 0 { return .infinity }
        let mse = sum / Double(a.pixels.count)
        return 10 * log10(255 * 255 / mse)
    }

    static func maxDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Int {
        zip(a.pixels, b.pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    static func meanDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Double {
        Double(zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.pixels.count)
    }

    /// The exact Gaussian (`exactGaussian`: sampled kernel out to 5σ, normalised, edges repeated), separable, in
    /// Double, then blended by the row weights exactly as the filter does: the reference the recursive filter is
    /// held to.
    static func exactTiltShift(_ image: ImageBuffer, sigma: Double, weights: [Float]) -> ImageBuffer {
        let (w, h, c) = (image.width, image.height, image.channels)
        let source = premultipliedSamples(image)
        let blurred = exactGaussian(source, width: w, height: h, channels: c, sigma: sigma)
        var result = image
        for y in 0..<h {
            let m = Double(weights[y])
            for x in 0..<w {
                let base = (y * w + x) * c
                let values = (0..<c).map { source[base + $0] + m * (blurred[base + $0] - source[base + $0]) }
                storePremultiplied(values, in: &result, at: base)
            }
        }
        return result
    }
}
