import CImageCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which SIMD variant of the pixel kernels (blur and blend) runs.
///
/// The package is built for baseline x86-64, so the kernels exist twice: for SSE2, which every x86-64 CPU
/// runs, and for AVX2 with FMA, chosen at run time where the CPU has both. The two agree within one level
/// (FMA rounds once where SSE rounds twice). `SHIFTWORK_SIMD=baseline` in the environment makes
/// `.automatic` take the baseline (to measure or compare it).
public enum KernelVariant: Sendable, Equatable, CustomStringConvertible {
    /// The best variant the CPU runs, unless `SHIFTWORK_SIMD=baseline`.
    case automatic
    /// SSE2 only.
    case baseline
    /// AVX2 + FMA; the baseline on CPUs without them.
    case avx2

    /// The variant that `.automatic` runs in this process.
    public static let selected: KernelVariant = {
        var chosen: Int32 = 0
        let forced = getenv("SHIFTWORK_SIMD").map { String(cString: $0) } == "baseline"
        _ = sw_blur_kernels_for(forced ? SW_SIMD_BASELINE : SW_SIMD_AUTO, &chosen)
        return chosen == SW_SIMD_AVX2 ? .avx2 : .baseline
    }()

    /// "avx2" or "sse2" (what actually runs), or "automatic".
    public var description: String {
        switch self {
        case .automatic: "automatic (\(Self.selected))"
        case .baseline: "sse2"
        case .avx2: Self.cpuHasAVX2 ? "avx2" : "sse2"
        }
    }

    /// Whether the CPU runs the AVX2 + FMA kernels.
    public static let cpuHasAVX2: Bool = {
        var chosen: Int32 = 0
        _ = sw_blur_kernels_for(SW_SIMD_AVX2, &chosen)
        return chosen == SW_SIMD_AVX2
    }()

    var kernels: UnsafePointer<sw_blur_kernels> {
        switch self {
        case .automatic: Self.selected.kernels
        case .baseline: sw_blur_kernels_for(SW_SIMD_BASELINE, nil)
        case .avx2: sw_blur_kernels_for(SW_SIMD_AVX2, nil)
        }
    }
}
