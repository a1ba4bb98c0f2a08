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
        let m0 = 1.16680, m1 = 1.10783, m2 = 1.40586
        let q = sigma < 3.556 ? -0.2568 + 0.5784 * sigma + 0.0561 * sigma * sigma : 2.5091 + 0.9804 * (sigma - 3.556)
        let q2 = q * q
        let scale = (m0 + q) * (m1 * m1 + m2 * m2 + 2 * m1 * q + q2)
        let b1 = -q * (2 * m0 * m1 + m1 * m1 + m2 * m2 + (2 * m0 + 4 * m1) * q + 3 * q2) / scale
        let b2 = q2 * (m0 + 2 * m1 + 3 * q) / scale
        let b3 = -q2 * q / scale
        let a1 = -b1, a2 = -b2, a3 = -b3
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

    /// The backward pass's starting values y[N−1], y[N], y[N+1] for an edge that repeats x[N−1] forever,
    /// from the last three forward values f[N−1], f[N−2], f[N−3].
    @inline(__always)
    func endValues<V: SIMD>(xEnd: V, f0: V, f1: V, f2: V) -> (V, V, V) where V.Scalar == Float {
        let d0 = f0 - xEnd, d1 = f1 - xEnd, d2 = f2 - xEnd
        let y0 = xEnd + m[0] * d0 + m[1] * d1 + m[2] * d2
        let y1 = xEnd + m[3] * d0 + m[4] * d1 + m[5] * d2
        let y2 = xEnd + m[6] * d0 + m[7] * d1 + m[8] * d2
        return (y0, y1, y2)
    }
}
