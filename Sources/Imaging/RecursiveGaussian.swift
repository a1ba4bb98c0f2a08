import CImageCodecs

/// Coefficients of the third-order recursive (IIR) Gaussian of Young, van Vliet and van Ginkel
/// ("Recursive Gabor filtering", IEEE Trans. Signal Processing 50(11), 2002), with the boundary
/// conditions of Triggs and Sdika (IEEE Trans. Signal Processing 54(6), 2006) for edges that repeat.
///
/// The filter runs forward, f[n] = B·x[n] + a1·f[n−1] + a2·f[n−2] + a3·f[n−3], then backward,
/// y[n] = B·f[n] + a1·y[n+1] + a2·y[n+2] + a3·y[n+3]: a fixed 14 multiply-adds per sample per axis,
/// whatever σ.
struct RecursiveGaussian: Sendable {
    let b: Float
    let a1: Float
    let a2: Float
    let a3: Float
    /// Triggs–Sdika matrix, row-major, already multiplied by B (see `endValues`).
    let m: [Float]

    init(sigma: Double) {
        let m0 = 1.16680
        let m1 = 1.10783
        let m2 = 1.40586
        let q = sigma < 3.556 ? -0.2568 + 0.5784 * sigma + 0.0561 * sigma * sigma : 2.5091 + 0.9804 * (sigma - 3.556)
        let q2 = q * q
        let scale = (m0 + q) * (m1 * m1 + m2 * m2 + 2 * m1 * q + q2)
        let b1 = -q * (2 * m0 * m1 + m1 * m1 + m2 * m2 + (2 * m0 + 4 * m1) * q + 3 * q2) / scale
        let b2 = q2 * (m0 + 2 * m1 + 3 * q) / scale
        let b3 = -q2 * q / scale
        let a1 = -b1
        let a2 = -b2
        let a3 = -b3
        // Normalise so that the gain is exactly 1: B = 1 − a1 − a2 − a3.
        let bb = 1 - a1 - a2 - a3
        let s = 1 / ((1 + a1 - a2 + a3) * (1 - a1 - a2 - a3) * (1 + a2 + (a1 - a3) * a3))
        var t = [Double](repeating: 0, count: 9)
        t[0] = s * (-a3 * a1 + 1 - a3 * a3 - a2)
        t[1] = s * (a3 + a1) * (a2 + a3 * a1)
        t[2] = s * a3 * (a1 + a3 * a2)
        t[3] = s * (a1 + a3 * a2)
        t[4] = -s * (a2 - 1) * (a2 + a3 * a1)
        t[5] = -s * a3 * (a3 * a1 + a3 * a3 + a2 - 1)
        t[6] = s * (a3 * a1 + a2 + a1 * a1 - a2 * a2)
        t[7] = s * (a1 * a2 + a3 * a2 * a2 - a1 * a3 * a3 - a3 * a3 * a3 - a3 * a2 + a3)
        t[8] = s * a3 * (a1 + a3 * a2)
        self.b = Float(bb)
        self.a1 = Float(a1)
        self.a2 = Float(a2)
        self.a3 = Float(a3)
        self.m = t.map { Float($0 * bb) }
    }

    /// The coefficients as the C kernels take them.
    var kernelCoefficients: sw_recursive_gaussian {
        var c = sw_recursive_gaussian()
        c.b = b
        c.a1 = a1
        c.a2 = a2
        c.a3 = a3
        c.m = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        return c
    }

    /// Samples after which an error in the backward pass's starting values has shrunk below `tolerance` of
    /// itself (about 11σ for 10⁻⁴): how far past a strip the vertical pass must look when the image is
    /// filtered in strips (see `StripBlender`).
    func settlingLength(tolerance: Double = 1e-4) -> Int {
        let (c1, c2, c3) = (Double(a1), Double(a2), Double(a3))
        var worst = 0
        // The error follows the homogeneous recursion; follow each of the three unit starting states.
        for start in 0..<3 {
            var state = [0.0, 0.0, 0.0]
            state[start] = 1
            var n = 0
            while state.contains(where: { abs($0) >= tolerance }) && n < 1_000_000 {
                let next = c1 * state[0] + c2 * state[1] + c3 * state[2]
                state = [next, state[0], state[1]]
                n += 1
            }
            worst = max(worst, n)
        }
        return worst
    }
}
