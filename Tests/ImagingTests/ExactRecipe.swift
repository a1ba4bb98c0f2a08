import Foundation

@testable import Imaging

/// The tilt-shift recipe computed exactly, in Double, for any angle and falloff: the reference the filter's
/// turned focus line and progressive falloff are held to.
extension TestImages {
    /// The image's samples as Doubles, RGBA premultiplied by its alpha (as the filter blurs it).
    static func premultipliedSamples(_ image: ImageBuffer) -> [Double] {
        var source = image.pixels.map(Double.init)
        if image.channels == 4 {
            for i in 0..<(image.width * image.height) {
                let a = source[4 * i + 3] / 255
                for k in 0..<3 { source[4 * i + k] *= a }
            }
        }
        return source
    }

    /// Stores the pixel `values` (premultiplied when RGBA: divided here by their alpha) at `base` in `image`, each
    /// rounded once.
    static func storePremultiplied(_ values: [Double], in image: inout ImageBuffer, at base: Int) {
        var values = values
        if values.count == 4 {
            let a = values[3]
            for k in 0..<3 { values[k] = a > 1e-6 ? values[k] * 255 / a : 0 }
        }
        for k in values.indices { image.pixels[base + k] = UInt8(max(0, min(255, values[k])).rounded()) }
    }

    /// The exact separable Gaussian of `source` (sampled kernel out to 5σ, normalised, edges repeated).
    static func exactGaussian(
        _ source: [Double], width w: Int, height h: Int, channels c: Int, sigma: Double
    ) -> [Double] {
        let radius = max(1, Int((5 * sigma).rounded(.up)))
        var kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var horizontal = [Double](repeating: 0, count: source.count)
        var vertical = [Double](repeating: 0, count: source.count)
        kernel.withUnsafeBufferPointer { kp in
            source.withUnsafeBufferPointer { s in
                horizontal.withUnsafeMutableBufferPointer { out in
                    for y in 0..<h {
                        for x in 0..<w {
                            for ch in 0..<c {
                                var acc = 0.0
                                for k in -radius...radius {
                                    acc += kp[k + radius] * s[(y * w + min(w - 1, max(0, x + k))) * c + ch]
                                }
                                out[(y * w + x) * c + ch] = acc
                            }
                        }
                    }
                }
            }
            horizontal.withUnsafeBufferPointer { s in
                vertical.withUnsafeMutableBufferPointer { out in
                    for y in 0..<h {
                        for x in 0..<(w * c) {
                            var acc = 0.0
                            for k in -radius...radius {
                                acc += kp[k + radius] * s[min(h - 1, max(0, y + k)) * w * c + x]
                            }
                            out[y * w * c + x] = acc
                        }
                    }
                }
            }
        }
        return vertical
    }

    /// The recipe of `parameters` on `image`, exactly: per-pixel weights m(x, y) from
    /// `TiltShiftMask.weight(x:y:…)` (the focus line at its angle); `.blend` takes orig + m (G_σ − orig),
    /// `.progressive` interpolates between the blurs at σ·k/levels at m·levels (level 0 the original). RGBA
    /// blends premultiplied and divides by the blended alpha; rounded once at the end.
    static func exactRecipe(_ image: ImageBuffer, parameters: TiltShiftParameters) -> ImageBuffer {
        let (w, h, c) = (image.width, image.height, image.channels)
        let source = premultipliedSamples(image)
        let levelCount = parameters.falloff == .progressive ? TiltShiftFalloff.progressiveLevels : 1
        let levels = (1...levelCount).map { k in
            exactGaussian(
                source, width: w, height: h, channels: c, sigma: parameters.blurRadius * Double(k) / Double(levelCount))
        }
        var result = image
        for y in 0..<h {
            for x in 0..<w {
                let m = Double(
                    TiltShiftMask.weight(x: Double(x), y: Double(y), width: w, height: h, parameters: parameters))
                let base = (y * w + x) * c
                var values = [Double](repeating: 0, count: c)
                for ch in 0..<c {
                    var value = source[base + ch]
                    var previous = source[base + ch]
                    for (k, level) in levels.enumerated() {
                        let share = min(1, max(0, m * Double(levelCount) - Double(k)))
                        value += share * (level[base + ch] - previous)
                        previous = level[base + ch]
                    }
                    values[ch] = value
                }
                storePremultiplied(values, in: &result, at: base)
            }
        }
        return result
    }

    /// `image` transposed: pixel (x, y) goes to (y, x).
    static func transposed(_ image: ImageBuffer) -> ImageBuffer {
        var result = ImageBuffer(width: image.height, height: image.width, channels: image.channels)
        for y in 0..<image.height {
            for x in 0..<image.width {
                for c in 0..<image.channels { result[y, x, c] = image[x, y, c] }
            }
        }
        return result
    }
}
