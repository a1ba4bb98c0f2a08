import CImageCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exact Gaussian as a finite (FIR) kernel: the Gaussian sampled at the integers out to ⌈4σ⌉ each side
/// (what is cut off is 6·10⁻⁵ of the weight), normalised to a sum of 1.
///
/// The recursive Gaussian (`RecursiveGaussian`) costs 14 multiply-adds per sample per axis whatever σ, but its
/// shape is off by about 1 % of an edge's height (2.5 levels on a 0→255 step at σ = 3…6): invisible on a
/// photograph, 41–45 dB on edges of full chroma. The exact kernel costs ⌈4σ⌉ + 1 multiply-adds per sample per
/// axis, so it is used where σ is small (`StripBlender.exactSigmaLimit`): the chroma planes of a JPEG, blurred at
/// σ/2, and small blurs.
struct ExactGaussian: Sendable {
    /// Taps each side of the centre.
    let radius: Int
    /// The weights at distance 0…radius.
    let taps: [Float]

    /// Radius in σ.
    static let extent = 4.0

    /// The largest σ whose kernel fits `SW_FIR_MAX_RADIUS`.
    static let largestSigma = Double(SW_FIR_MAX_RADIUS) / extent

    init(sigma: Double) {
        precondition(sigma > 0 && sigma <= Self.largestSigma, "σ \(sigma) is outside the exact kernel's range")
        let radius = max(1, Int((Self.extent * sigma).rounded(.up)))
        let weights = (0...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = weights[0] + 2 * weights.dropFirst().reduce(0, +)
        self.radius = radius
        self.taps = weights.map { Float($0 / total) }
    }

    /// The kernel as the C kernels take it.
    var kernelCoefficients: sw_fir_gaussian {
        var c = sw_fir_gaussian()
        c.radius = Int32(radius)
        withUnsafeMutableBytes(of: &c.taps) { raw in
            let floats = raw.bindMemory(to: Float.self)
            for (k, tap) in taps.enumerated() { floats[k] = tap }
        }
        return c
    }
}
