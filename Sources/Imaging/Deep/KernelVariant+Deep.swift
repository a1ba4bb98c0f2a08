import CImageCodecs

extension KernelVariant {
    /// The kernels for 16-bit samples (`blur16.c`): this variant's vertical passes, with horizontal passes and
    /// blends that read and write 16-bit samples (`StripBlender` with `bytesPerSample` 2).
    var deepKernels: UnsafePointer<sw_blur_kernels> {
        switch self {
        case .automatic: Self.selected.deepKernels
        case .baseline: sw_blur_kernels16_for(SW_SIMD_BASELINE, nil)
        case .avx2: sw_blur_kernels16_for(SW_SIMD_AVX2, nil)
        }
    }
}
