import Runtime

/// A Gaussian blur that costs the same per pixel whatever σ (a recursive filter, see `RecursiveGaussian`),
/// vectorised with SIMD (`KernelVariant`), and optionally blended row by row with the original (the tilt-shift).
///
/// Edges repeat (the image is clamped to its extent before blurring). RGBA is blurred premultiplied, so
/// transparent pixels do not darken their neighbours. The output is deterministic: it does not depend on
/// the number of threads. The work is done in strips (`StripBlender`): the memory it needs besides the
/// image is a window of rows, not a copy of the image.
public enum GaussianBlur {
    /// Blurs `image` with standard deviation `sigma` (pixels). `threads` > 1 splits the work across cores.
    /// Throws `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func apply(
        to image: ImageBuffer, sigma: Double, threads: Int = 1,
        cancellation: CancellationFlag? = nil
    ) throws -> ImageBuffer {
        var copy = image
        try CancellationToken.with(cancellation) { token in
            try blendInPlace(
                &copy, sigma: sigma, rowWeights: [Float](repeating: 1, count: image.height),
                threads: threads, kernels: .automatic, token: token)
        }
        return copy
    }

    /// Blurs `image` in place and blends it with the original row by row: `rowWeights[y]` is the share of
    /// the blurred row (0 keeps the original, 1 is fully blurred). On error `image` is left partly filtered.
    static func blendInPlace(
        _ image: inout ImageBuffer, sigma: Double, rowWeights: [Float], threads: Int,
        kernels: KernelVariant, token: CancellationToken
    ) throws {
        precondition(rowWeights.count == image.height)
        try blendInPlace(
            &image, sigma: sigma, mask: .rows(rowWeights), levels: 1, threads: threads, kernels: kernels,
            token: token)
    }

    /// Blurs `image` in place and blends it with the original through `mask` (per row or per pixel), from
    /// `levels` blurs at σ·k/levels (`TiltShiftFalloff`). On error `image` is left partly filtered.
    static func blendInPlace(
        _ image: inout ImageBuffer, sigma: Double, mask: BlendMask, levels: Int, threads: Int,
        kernels: KernelVariant, token: CancellationToken
    ) throws {
        if sigma <= 0 || mask.isZero { return }
        let blender = StripBlender(
            width: image.width, height: image.height, channels: image.channels, sigma: sigma, mask: mask,
            levels: levels,
            threads: threads, kernels: kernels, token: token)
        let rowBytes = image.rowBytes
        try image.pixels.withUnsafeMutableBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            while blender.received < image.height {
                let (space, rows) = blender.inputSpace()
                space.update(from: base + blender.received * rowBytes, count: rows * rowBytes)
                try blender.commit(rows: rows) { finished, count, first in
                    (base + first * rowBytes).update(from: finished, count: count * rowBytes)
                }
            }
        }
    }
}
