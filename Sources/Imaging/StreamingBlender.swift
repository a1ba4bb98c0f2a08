import CImageCodecs

/// The tilt-shift's blur and blend as rows stream through it (decode into `inputSpace()`, `commit`, encode what
/// it emits): `StripBlender` at full resolution, or `DecimatedStripBlender` (the blur on a halved plane) for large σ.
protocol StreamingBlender: AnyObject {
    /// Rows committed so far.
    var received: Int { get }
    /// Rows held at most: the window (finished rows are emitted at most this many at a time).
    var capacity: Int { get }
    /// Room for the next rows, contiguous: fill up to `rows` rows and `commit` them.
    func inputSpace() -> (pointer: UnsafeMutablePointer<UInt8>, rows: Int)
    /// Makes row `offset` of the next `inputSpace()` rows blur from `values` instead of its original values
    /// (only when made with `separateBlurInput`).
    func setBlurInput(row offset: Int, from values: UnsafePointer<UInt8>)
    /// Takes the next `rows` rows, filters what it can and hands finished rows to `emit(rows, count, firstRow)`.
    func commit(rows: Int, emit: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws
}

extension StripBlender: StreamingBlender {}

/// Chooses the blender for a streaming pipeline.
enum StreamingBlenders {
    /// `StripBlender`, or `DecimatedStripBlender` when `decimate` is on and it applies: 8-bit samples, one weight per row (the
    /// focus line upright, one level), gray or RGB, σ at least `DecimatedStripBlender.sigmaLimit` along both axes,
    /// and a plane of at least `DecimatedStripBlender.smallestSide` pixels each way (on a 48×32 image the edges,
    /// repeated a half pixel apart on the halved plane, held it to 41–42 dB; small planes cost little anyway).
    static func make(
        width: Int, height: Int, channels: Int, sigma: Double, verticalSigma: Double? = nil,
        mask: BlendMask, levels: Int, threads: Int, kernels: KernelVariant, separateBlurInput: Bool = false,
        decimate: Bool, bytesPerSample: Int = 1, token: CancellationToken
    ) -> any StreamingBlender {
        let side = DecimatedStripBlender.smallestSide
        // The halved plane is 8-bit; 16-bit samples (`bytesPerSample` 2) keep the full-resolution blur.
        if decimate, bytesPerSample == 1, levels == 1, case .rows(let weights) = mask, [1, 3].contains(channels),
            width >= side, height >= side,
            min(sigma, verticalSigma ?? sigma) >= DecimatedStripBlender.sigmaLimit, !mask.isZero
        {
            return DecimatedStripBlender(
                width: width, height: height, channels: channels, sigma: sigma,
                verticalSigma: verticalSigma, weights: weights, threads: threads, kernels: kernels,
                separateBlurInput: separateBlurInput, token: token)
        }
        return StripBlender(
            width: width, height: height, channels: channels, sigma: sigma, verticalSigma: verticalSigma,
            mask: mask, levels: levels, threads: threads, kernels: kernels,
            separateBlurInput: separateBlurInput, bytesPerSample: bytesPerSample, token: token)
    }
}
