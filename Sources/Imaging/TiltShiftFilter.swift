import Runtime

/// The tilt-shift filter on decoded pixels: Gaussian blur blended over the original through `TiltShiftMask`
/// (the focus line at `parameters.angle`, the blur as `parameters.falloff` says).
public enum TiltShiftFilter {
    /// Applies the tilt-shift to `image`. `threads` > 1 splits large images across cores (the result is the
    /// same). Throws `ImagingError` `.processing` for invalid parameters and `.cancelled` when `cancellation`
    /// is raised or the current task is cancelled (checked between blocks of rows).
    public static func apply(
        to image: ImageBuffer, parameters: TiltShiftParameters = .coreImage, threads: Int = 1,
        cancellation: CancellationFlag? = nil
    ) throws -> ImageBuffer {
        var copy = image
        try applyInPlace(&copy, parameters: parameters, threads: threads, cancellation: cancellation)
        return copy
    }

    /// Applies the tilt-shift to `image` in place: no second image buffer is allocated (when `image`'s pixels
    /// are not shared with another copy). On error `image` may be left partly filtered.
    public static func applyInPlace(
        _ image: inout ImageBuffer, parameters: TiltShiftParameters = .coreImage, threads: Int = 1,
        cancellation: CancellationFlag? = nil
    ) throws {
        try CancellationToken.with(cancellation) { token in
            try applyInPlace(&image, parameters: parameters, threads: threads, token: token)
        }
    }

    static func applyInPlace(
        _ image: inout ImageBuffer, parameters: TiltShiftParameters, threads: Int,
        kernels: KernelVariant = .automatic, token: CancellationToken
    ) throws {
        let parameters = try parameters.validated()
        let mask = TiltShiftMask.mask(width: image.width, height: image.height, parameters: parameters)
        try GaussianBlur.blendInPlace(
            &image, sigma: parameters.blurRadius, mask: mask, levels: parameters.falloff.levels,
            threads: threads, kernels: kernels, token: token)
    }
}
