import Foundation
import XCTest

@testable import Imaging

/// 16-bit images for the tests of the 16-bit path (issue #32): written by the project's own 16-bit encoders, read
/// back with the depth kept, and the tilt-shift recipe computed exactly at 16 bits.
enum SixteenBitSamples {
    /// A decoded image at its own depth: samples as `UInt16` (0…65535 at 16 bits, 0…255 at 8).
    struct Deep: Equatable {
        var width: Int
        var height: Int
        var channels: Int
        var bits: Int
        var sourceBits = 16
        var samples: [UInt16]
    }

    /// Smooth gradients with fine noise in every channel, using all 16 bits (values that are no multiple of 257):
    /// an 8-bit copy loses them.
    static func photo(width: Int, height: Int, channels: Int, seed: UInt64 = 7) -> [UInt16] {
        var state = seed
        var samples: [UInt16] = []
        samples.reserveCapacity(width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let noise = Double(Int(state >> 33) % 2001 - 1000)
                    let base: Double
                    if c == 3 {
                        base = 20000 + 40000 * Double(x) / Double(width)  // alpha, never 0
                    } else {
                        let phase = Double(c) * 1.3
                        base = 32768 + 26000 * sin(Double(x) / 9 + phase) * cos(Double(y) / 13 - phase)
                    }
                    samples.append(UInt16(max(0, min(65535, (base + noise).rounded()))))
                }
            }
        }
        return samples
    }

    /// A 16-bit PNG of `samples` (host order), through the project's encoder at `level`.
    static func png(
        _ samples: [UInt16], width: Int, height: Int, channels: Int, level: Int = 3,
        metadata: ImageMetadata = .none
    ) throws -> [UInt8] {
        let encoder = try PNGRowEncoder(
            width: width, height: height, channels: channels, level: level, metadata: metadata,
            bitsPerSample: 16, destination: .memory)
        return try encode(samples, height: height, encoder)
    }

    /// An AVIF of 16-bit `samples` at `depth` (10 or 12) bits through the project's encoder.
    static func avif(_ samples: [UInt16], width: Int, height: Int, channels: Int, depth: Int) throws -> [UInt8] {
        let encoder = try WholePictureEncoder(
            .avif, width: width, height: height, channels: channels, quality: 90,
            avifDepth: depth, destination: .memory)
        return try encode(samples, height: height, encoder)
    }

    /// A 16-bit TIFF of `samples` through the project's encoder.
    static func tiff(
        _ samples: [UInt16], width: Int, height: Int, channels: Int, metadata: ImageMetadata = .none
    ) throws -> [UInt8] {
        let encoder = try TIFFRowEncoder(
            width: width, height: height, channels: channels, metadata: metadata, bitsPerSample: 16,
            destination: .memory)
        return try encode(samples, height: height, encoder)
    }

    /// All of `samples` in one call (`height` rows), then the end of the image.
    private static func encode(_ samples: [UInt16], height: Int, _ encoder: RowEncoder) throws -> [UInt8] {
        try CancellationToken.with(nil) { token in
            try samples.withUnsafeBytes { raw in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                try encoder.write(base, rows: height, token: token)
            }
            return try encoder.finish(token: token) ?? []
        }
    }

    /// Decodes `bytes` at their own depth (16 bits kept), as the pipeline reads them.
    static func decode(_ bytes: [UInt8]) throws -> Deep {
        let decoded = try ImageCodec.decodeKeepingDepth(bytes)
        return Deep(
            width: decoded.width, height: decoded.height, channels: decoded.channels, bits: decoded.bitsPerSample,
            sourceBits: decoded.sourceBitsPerSample, samples: decoded.samples)
    }

    /// The recipe of `parameters` on 16-bit `samples`, exactly (Double; RGBA premultiplied, divided by the blended
    /// alpha), not rounded: the reference of the 16-bit filter.
    static func exactRecipe(
        _ samples: [UInt16], width w: Int, height h: Int, channels c: Int,
        parameters: TiltShiftParameters
    ) -> [Double] {
        var source = samples.map(Double.init)
        if c == 4 {
            for i in 0..<(w * h) {
                let a = source[4 * i + 3] / 65535
                for k in 0..<3 { source[4 * i + k] *= a }
            }
        }
        let levelCount = parameters.falloff == .progressive ? TiltShiftFalloff.progressiveLevels : 1
        let levels = (1...levelCount).map { k in
            TestImages.exactGaussian(
                source, width: w, height: h, channels: c, sigma: parameters.blurRadius * Double(k) / Double(levelCount))
        }
        var result = source
        for y in 0..<h {
            for x in 0..<w {
                let m = Double(
                    TiltShiftMask.weight(x: Double(x), y: Double(y), width: w, height: h, parameters: parameters))
                let base = (y * w + x) * c
                for ch in 0..<c {
                    var value = source[base + ch]
                    var previous = source[base + ch]
                    for (k, level) in levels.enumerated() {
                        let share = min(1, max(0, m * Double(levelCount) - Double(k)))
                        value += share * (level[base + ch] - previous)
                        previous = level[base + ch]
                    }
                    result[base + ch] = value
                }
                if c == 4 {
                    let a = result[base + 3]
                    for k in 0..<3 { result[base + k] = a > 1e-6 ? result[base + k] * 65535 / a : 0 }
                }
                for k in 0..<c { result[base + k] = max(0, min(65535, result[base + k])) }
            }
        }
        return result
    }

    /// PSNR (dB, peak 65535) of `values` against `reference`; `scale` multiplies `values` first (257 for 8-bit ones).
    static func psnr(_ values: [UInt16], scale: Double = 1, against reference: [Double]) -> Double {
        precondition(values.count == reference.count)
        var total = 0.0
        for (v, r) in zip(values, reference) {
            let d = Double(v) * scale - r
            total += d * d
        }
        let mse = total / Double(values.count)
        return mse == 0 ? .infinity : 10 * log10(65535.0 * 65535.0 / mse)
    }
}
