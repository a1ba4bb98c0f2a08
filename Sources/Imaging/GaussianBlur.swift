import Dispatch
import Synchronization

/// A Gaussian blur that costs the same per pixel whatever σ (a recursive filter, see `RecursiveGaussian`),
/// vectorised with SIMD, and optionally blended row by row with the original (the tilt-shift).
///
/// Edges repeat (the image is clamped to its extent before blurring). RGBA is blurred premultiplied, so
/// transparent pixels do not darken their neighbours. The output is deterministic: it does not depend on
/// the number of threads.
public enum GaussianBlur {
    /// Blurs `image` with standard deviation `sigma` (pixels). `threads` > 1 splits the work across cores.
    public static func apply(to image: ImageBuffer, sigma: Double, threads: Int = 1) throws -> ImageBuffer {
        try blend(image, sigma: sigma, rowWeights: [Float](repeating: 1, count: image.height), threads: threads)
    }

    /// out = orig + w[y]·(blur − orig) for every row y. Checks Task cancellation between strips and blocks
    /// of rows, throwing `ImagingError` of kind `.cancelled`.
    static func blend(_ image: ImageBuffer, sigma: Double, rowWeights: [Float], threads: Int) throws -> ImageBuffer {
        precondition(rowWeights.count == image.height)
        if sigma <= 0 || rowWeights.allSatisfy({ $0 == 0 }) { return image }
        return try withUnsafeCurrentTask { task in
            let token = CancellationToken(task: task)
            let engine = BlurEngine(image: image, sigma: sigma, rowWeights: rowWeights, threads: max(1, threads), token: token)
            return try engine.run()
        }
    }
}

/// Reads the cancellation flag of the task that started the work, from any of the worker threads.
struct CancellationToken: @unchecked Sendable {
    let task: UnsafeCurrentTask?
    var isCancelled: Bool { task?.isCancelled ?? false }
}

/// Memory shared by the worker threads; each thread writes disjoint parts.
private struct Shared<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
}

private final class BlurEngine: Sendable {
    let width: Int
    let height: Int
    let channels: Int
    /// Samples per row.
    let n: Int
    let coefficients: RecursiveGaussian
    let weights: [Float]
    let threads: Int
    let token: CancellationToken
    let image: ImageBuffer

    static let stripWidth = 64
    static let blockRows = 8

    init(image: ImageBuffer, sigma: Double, rowWeights: [Float], threads: Int, token: CancellationToken) {
        self.image = image
        self.width = image.width
        self.height = image.height
        self.channels = image.channels
        self.n = image.width * image.channels
        self.coefficients = RecursiveGaussian(sigma: sigma)
        self.weights = rowWeights
        self.threads = threads
        self.token = token
    }

    func run() throws -> ImageBuffer {
        let count = n * height
        // The vertically blurred image, Float, row-major.
        let vertical = UnsafeMutablePointer<Float>.allocate(capacity: count)
        defer { vertical.deallocate() }
        // RGBA is blurred premultiplied: the premultiplied source, as Float.
        var premultiplied: UnsafeMutablePointer<Float>? = nil
        defer { premultiplied?.deallocate() }

        var output = [UInt8](repeating: 0, count: count)
        try image.pixels.withUnsafeBufferPointer { src in
            guard let source = src.baseAddress else { return }
            if channels == 4 {
                let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
                premultiplied = p
                premultiply(source, into: p, pixels: width * height)
            }
            let premul = premultiplied.map { Shared(pointer: $0) }
            let src8 = Shared(pointer: UnsafeMutablePointer(mutating: source))
            let vert = Shared(pointer: vertical)

            // Pass 1: vertical, in strips of columns.
            let strips = (n + Self.stripWidth - 1) / Self.stripWidth
            try parallel(count: strips) { range in
                let scratch = UnsafeMutablePointer<Float>.allocate(capacity: (self.height + 6) * Self.stripWidth)
                defer { scratch.deallocate() }
                for strip in range {
                    if self.token.isCancelled { throw ImagingError.cancelledError }
                    let j0 = strip * Self.stripWidth
                    let w = min(Self.stripWidth, self.n - j0)
                    if let premul {
                        self.verticalStrip(j0: j0, count: w, scratch: scratch, output: vert.pointer) { y, j in
                            premul.pointer[y * self.n + j]
                        }
                    } else {
                        self.verticalStrip(j0: j0, count: w, scratch: scratch, output: vert.pointer) { y, j in
                            Float(src8.pointer[y * self.n + j])
                        }
                    }
                }
            }

            // Pass 2: horizontal, in blocks of rows, blended with the original.
            try output.withUnsafeMutableBufferPointer { out in
                guard let outBase = out.baseAddress else { return }
                let dst = Shared(pointer: outBase)
                let blocks = (self.height + Self.blockRows - 1) / Self.blockRows
                try parallel(count: blocks) { range in
                    let scratch = UnsafeMutablePointer<SIMD8<Float>>.allocate(capacity: self.n + 6 * self.channels)
                    defer { scratch.deallocate() }
                    for block in range {
                        if self.token.isCancelled { throw ImagingError.cancelledError }
                        self.horizontalBlock(
                            y0: block * Self.blockRows, vertical: vert.pointer, source: src8.pointer,
                            premultiplied: premul?.pointer, scratch: scratch, output: dst.pointer)
                    }
                }
            }
        }
        return try ImageBuffer(width: width, height: height, channels: channels, pixels: output)
    }

    /// Runs `body` over `0..<count` split into contiguous chunks, on up to `threads` threads.
    private func parallel(count: Int, _ body: @escaping @Sendable (Range<Int>) throws -> Void) throws {
        let workers = min(threads, count)
        if workers <= 1 {
            try body(0..<count)
            return
        }
        let errors = ErrorBox()
        DispatchQueue.concurrentPerform(iterations: workers) { t in
            let lower = count * t / workers
            let upper = count * (t + 1) / workers
            do { try body(lower..<upper) } catch { errors.record(error) }
        }
        if let error = errors.first { throw error }
    }

    private func premultiply(_ source: UnsafePointer<UInt8>, into p: UnsafeMutablePointer<Float>, pixels: Int) {
        let scale: Float = 1 / 255
        for i in 0..<pixels {
            let a = Float(source[4 * i + 3])
            let k = a * scale
            p[4 * i] = Float(source[4 * i]) * k
            p[4 * i + 1] = Float(source[4 * i + 1]) * k
            p[4 * i + 2] = Float(source[4 * i + 2]) * k
            p[4 * i + 3] = a
        }
    }

    /// Blurs columns j0..<j0+count along y, writing into `output` (row-major, n per row).
    @inline(__always)
    private func verticalStrip(j0: Int, count: Int, scratch: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
                               load: (Int, Int) -> Float) {
        let sw = Self.stripWidth
        let h = height
        let g = coefficients
        // Rows of the scratch: -3..<h+3, stored at index (y + 3).
        @inline(__always) func row(_ y: Int) -> UnsafeMutablePointer<Float> { scratch + (y + 3) * sw }
        // Load the strip (zero-padded to the full width) into scratch rows 0..<h.
        for y in 0..<h {
            let r = row(y)
            for k in 0..<count { r[k] = load(y, j0 + k) }
            for k in count..<sw { r[k] = 0 }
        }
        typealias V = SIMD16<Float>
        let lanes = sw / 16
        @inline(__always) func vload(_ p: UnsafeMutablePointer<Float>, _ k: Int) -> V {
            UnsafeRawPointer(p + 16 * k).loadUnaligned(as: V.self)
        }
        @inline(__always) func vstore(_ v: V, _ p: UnsafeMutablePointer<Float>, _ k: Int) {
            UnsafeMutableRawPointer(p + 16 * k).storeBytes(of: v, as: V.self)
        }
        // Forward: the three rows above the top repeat row 0 (steady state for a constant edge).
        for k in 0..<lanes {
            let x0 = vload(row(0), k)
            vstore(x0, row(-1), k); vstore(x0, row(-2), k); vstore(x0, row(-3), k)
        }
        // Keep the last input row: the backward pass's edge value.
        var xEnd = [V](repeating: V(), count: lanes)
        for k in 0..<lanes { xEnd[k] = vload(row(h - 1), k) }
        for y in 0..<h {
            let r = row(y), p1 = row(y - 1), p2 = row(y - 2), p3 = row(y - 3)
            for k in 0..<lanes {
                let f = g.b * vload(r, k) + g.a1 * vload(p1, k) + g.a2 * vload(p2, k) + g.a3 * vload(p3, k)
                vstore(f, r, k)
            }
        }
        // Backward, starting from the Triggs–Sdika values at the bottom edge.
        for k in 0..<lanes {
            let (y0, y1, y2) = g.endValues(xEnd: xEnd[k], f0: vload(row(h - 1), k), f1: vload(row(h - 2), k), f2: vload(row(h - 3), k))
            vstore(y0, row(h - 1), k); vstore(y1, row(h), k); vstore(y2, row(h + 1), k)
        }
        if h >= 2 {
            for y in stride(from: h - 2, through: 0, by: -1) {
                let r = row(y), p1 = row(y + 1), p2 = row(y + 2), p3 = row(y + 3)
                for k in 0..<lanes {
                    let v = g.b * vload(r, k) + g.a1 * vload(p1, k) + g.a2 * vload(p2, k) + g.a3 * vload(p3, k)
                    vstore(v, r, k)
                }
            }
        }
        for y in 0..<h {
            let r = row(y)
            let o = output + y * n + j0
            if count == sw {
                for k in 0..<lanes { vstore(vload(r, k), o, k) }
            } else {
                for k in 0..<count { o[k] = r[k] }
            }
        }
    }

    /// Blurs rows y0..<y0+8 along x (8 rows side by side in SIMD lanes), blends with the original and
    /// writes the 8-bit result.
    private func horizontalBlock(y0: Int, vertical: UnsafeMutablePointer<Float>, source: UnsafeMutablePointer<UInt8>,
                                 premultiplied: UnsafeMutablePointer<Float>?, scratch: UnsafeMutablePointer<SIMD8<Float>>,
                                 output: UnsafeMutablePointer<UInt8>) {
        typealias V = SIMD8<Float>
        let c = channels
        let n = self.n
        let g = coefficients
        let rows = min(Self.blockRows, height - y0)
        var weight = V()
        for l in 0..<8 { weight[l] = weights[y0 + min(l, rows - 1)] }
        // Rows where the weight is 0 everywhere: copy.
        if weight == V() {
            for l in 0..<rows {
                (output + (y0 + l) * n).update(from: source + (y0 + l) * n, count: n)
            }
            return
        }
        let r0 = vertical + (y0 + min(0, rows - 1)) * n, r1 = vertical + (y0 + min(1, rows - 1)) * n
        let r2 = vertical + (y0 + min(2, rows - 1)) * n, r3 = vertical + (y0 + min(3, rows - 1)) * n
        let r4 = vertical + (y0 + min(4, rows - 1)) * n, r5 = vertical + (y0 + min(5, rows - 1)) * n
        let r6 = vertical + (y0 + min(6, rows - 1)) * n, r7 = vertical + (y0 + min(7, rows - 1)) * n
        // The scratch holds 3c samples of history before the row and 3c after it.
        let s = scratch + 3 * c
        for i in 0..<n {
            s[i] = V(r0[i], r1[i], r2[i], r3[i], r4[i], r5[i], r6[i], r7[i])
        }
        // Forward.
        for k in 0..<c {
            let x0 = s[k]
            s[k - c] = x0; s[k - 2 * c] = x0; s[k - 3 * c] = x0
        }
        var xEnd = [V](repeating: V(), count: c)
        for k in 0..<c { xEnd[k] = s[n - c + k] }
        for i in 0..<n {
            s[i] = g.b * s[i] + g.a1 * s[i - c] + g.a2 * s[i - 2 * c] + g.a3 * s[i - 3 * c]
        }
        // Backward.
        for k in 0..<c {
            let last = n - c + k
            let (y0v, y1v, y2v) = g.endValues(xEnd: xEnd[k], f0: s[last], f1: s[last - c], f2: s[last - 2 * c])
            s[last] = y0v; s[last + c] = y1v; s[last + 2 * c] = y2v
        }
        var i = n - c - 1
        while i >= 0 {
            s[i] = g.b * s[i] + g.a1 * s[i + c] + g.a2 * s[i + 2 * c] + g.a3 * s[i + 3 * c]
            i -= 1
        }
        // Blend and write.
        let half = V(repeating: 0.5)
        let zero = V(), top = V(repeating: 255)
        if let premultiplied {
            let p = premultiplied + y0 * n
            for x in 0..<width {
                var out = (V(), V(), V(), V())
                var values = [V](repeating: V(), count: 4)
                for k in 0..<4 {
                    let idx = 4 * x + k
                    var orig = V()
                    for l in 0..<8 { orig[l] = p[min(l, rows - 1) * n + idx] }
                    values[k] = orig + weight * (s[idx] - orig)
                }
                let alpha = values[3].clamped(lowerBound: zero, upperBound: top)
                let safe = alpha.replacing(with: 1, where: alpha .< 1e-6)
                let unscale = V(repeating: 255) / safe
                out.0 = (values[0] * unscale).clamped(lowerBound: zero, upperBound: top)
                out.1 = (values[1] * unscale).clamped(lowerBound: zero, upperBound: top)
                out.2 = (values[2] * unscale).clamped(lowerBound: zero, upperBound: top)
                let transparent = alpha .< 1e-6
                out.0.replace(with: 0, where: transparent)
                out.1.replace(with: 0, where: transparent)
                out.2.replace(with: 0, where: transparent)
                out.3 = alpha
                for l in 0..<rows {
                    let o = output + (y0 + l) * n + 4 * x
                    o[0] = UInt8((out.0[l] + 0.5).rounded(.down))
                    o[1] = UInt8((out.1[l] + 0.5).rounded(.down))
                    o[2] = UInt8((out.2[l] + 0.5).rounded(.down))
                    o[3] = UInt8((out.3[l] + 0.5).rounded(.down))
                }
            }
        } else {
            let src = source + y0 * n
            for idx in 0..<n {
                var orig = V()
                for l in 0..<8 { orig[l] = Float(src[min(l, rows - 1) * n + idx]) }
                let v = (orig + weight * (s[idx] - orig)).clamped(lowerBound: zero, upperBound: top) + half
                for l in 0..<rows {
                    output[(y0 + l) * n + idx] = UInt8(v[l].rounded(.down))
                }
            }
        }
    }
}

/// Collects the first error thrown by a worker thread.
private final class ErrorBox: Sendable {
    private let error = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { self.error.withLock { if $0 == nil { $0 = error } } }
    var first: (any Error)? { error.withLock { $0 } }
}
