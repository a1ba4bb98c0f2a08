import Dispatch
import Operations
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Gaussian blur that costs the same per pixel whatever σ (a recursive filter, see `RecursiveGaussian`),
/// vectorised with SIMD, and optionally blended row by row with the original (the tilt-shift).
///
/// Edges repeat (the image is clamped to its extent before blurring). RGBA is blurred premultiplied, so
/// transparent pixels do not darken their neighbours. The output is deterministic: it does not depend on
/// the number of threads.
public enum GaussianBlur {
    /// Blurs `image` with standard deviation `sigma` (pixels). `threads` > 1 splits the work across cores.
    /// Throws `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func apply(to image: ImageBuffer, sigma: Double, threads: Int = 1,
                             cancellation: CancellationFlag? = nil) throws -> ImageBuffer {
        var copy = image
        try CancellationToken.with(cancellation) { token in
            try blendInPlace(&copy, sigma: sigma, rowWeights: [Float](repeating: 1, count: image.height),
                             threads: threads, token: token)
        }
        return copy
    }

    /// Blurs `image` in place and blends it with the original row by row: `rowWeights[y]` is the share of
    /// the blurred row (0 keeps the original, 1 is fully blurred). No second image buffer is allocated
    /// when `image`'s pixels are not shared (the output row y is written after row y of the original has
    /// been read for the last time). On error `image` is left partly filtered.
    static func blendInPlace(_ image: inout ImageBuffer, sigma: Double, rowWeights: [Float], threads: Int,
                             token: CancellationToken) throws {
        precondition(rowWeights.count == image.height)
        if sigma <= 0 || rowWeights.allSatisfy({ $0 == 0 }) { return }
        let (width, height, channels) = (image.width, image.height, image.channels)
        try image.pixels.withUnsafeMutableBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            let engine = BlurEngine(
                source: UnsafePointer(base), width: width, height: height, channels: channels,
                sigma: sigma, rowWeights: rowWeights, threads: max(1, threads), token: token)
            try engine.run(output: base)
        }
    }
}

/// The two passes over one image.
///
/// 1. Horizontal, row by row, into an intermediate Float image (`stride` floats a row). Each step of the
///    recursion handles one pixel (its channels in the lanes of a SIMD4) of two rows at once (a SIMD8), so
///    that two independent recursions keep the FPU busy; gray images put eight rows in a SIMD8. RGBA is
///    premultiplied on the way in.
/// 2. Vertical, over whole rows, 16 samples a step: the forward recursion in place (on one thread it follows
///    the horizontal pass a group of rows at a time, while they are in cache), then the backward recursion
///    from the bottom, keeping three rows, blending each finished row with the original and writing the
///    8-bit output. With several threads, rows are split among them for pass 1 and columns for pass 2.
///
/// Memory is walked in order (whole rows) everywhere: an earlier version that ran the vertical pass down
/// narrow strips of columns spent most of its time in cache and TLB misses.
private final class BlurEngine: @unchecked Sendable {
    typealias V16 = SIMD16<Float>
    typealias V4 = SIMD4<Float>
    /// The vector of the horizontal pass: two RGB(A) pixels of two rows, or one gray pixel of eight rows.
    /// (Two independent recursions are enough to keep the FPU busy; four would not fit in the registers.)
    typealias HV = SIMD8<Float>
    /// Rows per horizontal group.
    var rowsPerGroup: Int { channels == 1 ? 8 : 2 }

    let source: UnsafePointer<UInt8>
    let width: Int
    let height: Int
    let channels: Int
    /// Samples per row.
    let n: Int
    let g: RecursiveGaussian
    let weights: [Float]
    let threads: Int
    let token: CancellationToken
    /// Floats per row of the intermediate image: `n` rounded up to a multiple of 16.
    let stride: Int

    init(source: UnsafePointer<UInt8>, width: Int, height: Int, channels: Int, sigma: Double, rowWeights: [Float],
         threads: Int, token: CancellationToken) {
        self.source = source
        self.width = width
        self.height = height
        self.channels = channels
        self.n = width * channels
        self.stride = (width * channels + 15) / 16 * 16
        self.g = RecursiveGaussian(sigma: sigma)
        self.weights = rowWeights
        self.threads = threads
        self.token = token
    }

    /// Filters into `output` (`n * height` bytes), which may be the source itself.
    func run(output outBase: UnsafeMutablePointer<UInt8>) throws {
        let stride = self.stride
        // The image after the horizontal pass, then (in place) after the forward vertical pass.
        let rows = LargeBuffer.take(floats: stride * height)
        defer { LargeBuffer.recycle(rows, floats: stride * height) }
        // The first and last input rows of the vertical pass, saved before the forward pass overwrites them.
        let edges = UnsafeMutablePointer<Float>.allocate(capacity: 2 * stride)
        defer { edges.deallocate() }
        let shared = Shared(rows: rows, top: edges, bottom: edges + stride)
        let rowsPerGroup = self.rowsPerGroup
        let groups = (height + rowsPerGroup - 1) / rowsPerGroup
        // Columns are independent in the vertical pass: one chunk (a multiple of 16 samples) per thread.
        let vectors = stride / 16
        let chunks = max(1, min(threads, vectors))
        @Sendable func columns(_ chunk: Int) -> Range<Int> {
            (16 * (vectors * chunk / chunks))..<(16 * (vectors * (chunk + 1) / chunks))
        }

        if chunks == 1 {
            // One thread: the forward vertical pass follows the horizontal pass group by group, while the
            // rows are still in cache.
            let scratch = UnsafeMutablePointer<HV>.allocate(capacity: width)
            defer { scratch.deallocate() }
            for group in 0..<groups {
                if token.isCancelled { throw ImagingError.cancelledError }
                let y0 = group * rowsPerGroup
                horizontalGroup(y0: y0, scratch: scratch, output: rows)
                forward(rows: y0..<min(height, y0 + rowsPerGroup), columns: 0..<stride, shared: shared)
            }
        } else {
            try parallel(count: groups) { range in
                let scratch = UnsafeMutablePointer<HV>.allocate(capacity: self.width)
                defer { scratch.deallocate() }
                for group in range {
                    if self.token.isCancelled { throw ImagingError.cancelledError }
                    self.horizontalGroup(y0: group * rowsPerGroup, scratch: scratch, output: shared.rows)
                }
            }
            try parallel(count: chunks) { range in
                for chunk in range {
                    for y0 in Swift.stride(from: 0, to: self.height, by: Self.rowsPerCancelCheck) {
                        if self.token.isCancelled { throw ImagingError.cancelledError }
                        self.forward(rows: y0..<min(self.height, y0 + Self.rowsPerCancelCheck), columns: columns(chunk), shared: shared)
                    }
                }
            }
        }
        let output = SharedBytes(base: outBase)
        try parallel(count: chunks) { range in
            for chunk in range {
                try self.backward(columns: columns(chunk), shared: shared, output: output.base)
            }
        }
    }

    /// Rows between two looks at the cancellation token in the vertical passes: a few milliseconds of work
    /// even on a 12000-pixel-wide image (the cost of a look is one atomic load).
    static let rowsPerCancelCheck = 16

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

    // MARK: - Horizontal pass

    private func horizontalGroup(y0: Int, scratch: UnsafeMutablePointer<HV>, output: UnsafeMutablePointer<Float>) {
        switch channels {
        case 1: horizontalGray(y0: y0, scratch: scratch, output: output)
        case 3: horizontalColor(y0: y0, channels: 3, scratch: scratch, output: output)
        default: horizontalColor(y0: y0, channels: 4, scratch: scratch, output: output)
        }
        // The padding at the end of each row goes through the vertical pass too: keep it finite.
        for y in y0..<min(height, y0 + rowsPerGroup) {
            (output + y * stride + n).initialize(repeating: 0, count: stride - n)
        }
    }

    /// The recursion along one row for four sequences at once; `load(x)` gives the input of pixel x,
    /// `store(x, y)` receives the result, called for x from w−1 down to 0.
    @inline(__always)
    private func recurse(scratch f: UnsafeMutablePointer<HV>, load: (Int) -> HV, store: (Int, HV) -> Void) {
        let w = width
        let b = g.b, a1 = g.a1, a2 = g.a2, a3 = g.a3
        let x0 = load(0)
        var p1 = x0, p2 = x0, p3 = x0
        var xEnd = x0
        for x in 0..<w {
            let v = load(x)
            let value = (b * v + a3 * p3 + a2 * p2) + a1 * p1
            f[x] = value
            p3 = p2; p2 = p1; p1 = value
            xEnd = v
        }
        var (q1, q2, q3) = g.endValues(xEnd: xEnd, f0: p1, f1: p2, f2: p3)
        store(w - 1, q1)
        var x = w - 2
        while x >= 0 {
            let value = (b * f[x] + a3 * q3 + a2 * q2) + a1 * q1
            store(x, value)
            q3 = q2; q2 = q1; q1 = value
            x -= 1
        }
    }

    /// RGB or RGBA: a pixel's channels in a SIMD4, two rows in a SIMD8.
    @inline(__always)
    private func horizontalColor(y0: Int, channels c: Int, scratch: UnsafeMutablePointer<HV>, output: UnsafeMutablePointer<Float>) {
        let w = width, n = self.n
        let rows = min(2, height - y0)
        let s0 = source + y0 * n, s1 = source + (y0 + min(1, rows - 1)) * n
        let o0 = output + y0 * stride
        let premultiply = c == 4
        @inline(__always) func pixel(_ row: UnsafePointer<UInt8>, _ x: Int) -> V4 {
            var v: V4
            if c == 4 || x < w - 1 {
                // Four bytes; for RGB the fourth is the next pixel's red, in a lane that is ignored.
                let bytes = UnsafeRawPointer(row + c * x).loadUnaligned(as: SIMD4<UInt8>.self)
                v = V4(SIMD4<Int32>(truncatingIfNeeded: bytes))
            } else {
                v = V4(Float(row[c * x]), Float(row[c * x + 1]), Float(row[c * x + 2]), 0)
            }
            if premultiply {
                let k = v[3] * (1 / 255)
                v *= V4(k, k, k, 1)
            }
            return v
        }
        recurse(scratch: scratch, load: { x in
            HV(lowHalf: pixel(s0, x), highHalf: pixel(s1, x))
        }, store: { x, y in
            @inline(__always) func put(_ r: Int, _ v: V4) {
                let p = o0 + r * self.stride + c * x
                if c == 4 {
                    UnsafeMutableRawPointer(p).storeBytes(of: v, as: V4.self)
                } else {
                    p[0] = v[0]; p[1] = v[1]; p[2] = v[2]
                }
            }
            put(0, y.lowHalf)
            if rows > 1 { put(1, y.highHalf) }
        })
    }

    /// Gray: eight rows in a SIMD8.
    private func horizontalGray(y0: Int, scratch: UnsafeMutablePointer<HV>, output: UnsafeMutablePointer<Float>) {
        let n = self.n, stride = self.stride
        let rows = min(8, height - y0)
        var sources = [UnsafePointer<UInt8>]()
        for r in 0..<8 { sources.append(source + (y0 + min(r, rows - 1)) * n) }
        sources.withUnsafeBufferPointer { s in
            recurse(scratch: scratch, load: { x in
                HV(Float(s[0][x]), Float(s[1][x]), Float(s[2][x]), Float(s[3][x]),
                   Float(s[4][x]), Float(s[5][x]), Float(s[6][x]), Float(s[7][x]))
            }, store: { x, y in
                for r in 0..<rows { output[(y0 + r) * stride + x] = y[r] }
            })
        }
    }

    // MARK: - Vertical pass

    @inline(__always)
    private func load(_ p: UnsafeMutablePointer<Float>, _ j: Int) -> V16 {
        UnsafeRawPointer(p + j).loadUnaligned(as: V16.self)
    }

    @inline(__always)
    private func store(_ v: V16, _ p: UnsafeMutablePointer<Float>, _ j: Int) {
        UnsafeMutableRawPointer(p + j).storeBytes(of: v, as: V16.self)
    }

    /// The forward vertical recursion over `rows` (in order, after the rows above), for `columns` (a multiple
    /// of 16 samples), in place. Rows are walked whole, so memory is read in order.
    private func forward(rows: Range<Int>, columns: Range<Int>, shared: Shared) {
        let h = height, stride = self.stride
        let b = g.b, a1 = g.a1, a2 = g.a2, a3 = g.a3
        let top = shared.top
        @inline(__always) func row(_ y: Int) -> UnsafeMutablePointer<Float> { shared.rows + y * stride }
        for y in rows {
            let r = row(y)
            if y == 0 {
                for j in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 16) { store(load(r, j), top, j) }
            }
            if y == h - 1 {
                for j in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 16) { store(load(r, j), shared.bottom, j) }
            }
            // Above the top, the edge repeats: the recursion's steady state for a constant is that constant.
            let p1 = y >= 1 ? row(y - 1) : top, p2 = y >= 2 ? row(y - 2) : top, p3 = y >= 3 ? row(y - 3) : top
            for j in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 16) {
                let value = (b * load(r, j) + a3 * load(p3, j) + a2 * load(p2, j)) + a1 * load(p1, j)
                store(value, r, j)
            }
        }
    }

    /// The backward vertical recursion for `columns`, from the Triggs–Sdika values at the bottom edge up,
    /// blending each finished row with the original and writing the 8-bit result. The backward values live
    /// in a ring of three rows.
    private func backward(columns: Range<Int>, shared: Shared, output: UnsafeMutablePointer<UInt8>) throws {
        let h = height, stride = self.stride
        let b = g.b, a1 = g.a1, a2 = g.a2, a3 = g.a3
        let width = columns.count
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: 3 * width)
        defer { ring.deallocate() }
        @inline(__always) func row(_ y: Int) -> UnsafeMutablePointer<Float> { shared.rows + y * stride }
        var q1 = ring - columns.lowerBound, q2 = q1 + width, q3 = q2 + width
        let f1 = h >= 2 ? row(h - 2) : shared.top, f2 = h >= 3 ? row(h - 3) : shared.top
        for j in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 16) {
            let (y0, y1, y2) = g.endValues(xEnd: load(shared.bottom, j), f0: load(row(h - 1), j), f1: load(f1, j), f2: load(f2, j))
            store(y0, q1, j); store(y1, q2, j); store(y2, q3, j)
        }
        writeRow(h - 1, columns: columns, blurred: q1, output: output)
        var y = h - 2
        while y >= 0 {
            if y % Self.rowsPerCancelCheck == 0, token.isCancelled { throw ImagingError.cancelledError }
            let r = row(y)
            // The new row replaces the oldest one of the ring (read before written, lane by lane).
            let destination = q3
            for j in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 16) {
                let value = (b * load(r, j) + a3 * load(q3, j) + a2 * load(q2, j)) + a1 * load(q1, j)
                store(value, destination, j)
            }
            writeRow(y, columns: columns, blurred: destination, output: output)
            (q1, q2, q3) = (destination, q1, q2)
            y -= 1
        }
    }

    /// 1.5·2²³: adding it to a float in 0…255 leaves the value rounded to the nearest integer (ties to even)
    /// in the low bits of the sum's bit pattern: a vectorised float → integer rounding.
    static let roundingMagic: Float = 12_582_912

    /// Clamps to 0…255. (Masked selects compile to vector compares and blends; `clamped(lowerBound:upperBound:)`
    /// and `pointwiseMin`/`Max` go lane by lane through memory, hundreds of times slower.)
    @inline(__always)
    static func clamp(_ v: V16) -> V16 {
        let low = v.replacing(with: 0, where: v .< 0)
        return low.replacing(with: 255, where: low .> 255)
    }

    @inline(__always)
    static func clamp(_ v: V4) -> V4 {
        let low = v.replacing(with: 0, where: v .< 0)
        return low.replacing(with: 255, where: low .> 255)
    }

    /// out = orig + w·(blur − orig) for the samples `columns` of row `y` (`blurred` is the whole row).
    @inline(__always)
    private func writeRow(_ y: Int, columns: Range<Int>, blurred: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<UInt8>) {
        let weight = weights[y]
        let end = min(columns.upperBound, n)
        guard columns.lowerBound < end else { return }
        let src = source + y * n, out = output + y * n
        if channels == 4 {
            writeRowPremultiplied(source: src, range: columns.lowerBound..<end, weight: weight, blurred: blurred, output: out)
            return
        }
        var j = columns.lowerBound
        while j + 16 <= end {
            let bytes = UnsafeRawPointer(src + j).loadUnaligned(as: SIMD16<UInt8>.self)
            let orig = V16(SIMD16<Int32>(truncatingIfNeeded: bytes))
            let blur = UnsafeRawPointer(blurred + j).loadUnaligned(as: V16.self)
            let v = Self.clamp(orig + weight * (blur - orig))
            let result = SIMD16<UInt8>(truncatingIfNeeded: unsafeBitCast(v + Self.roundingMagic, to: SIMD16<UInt32>.self))
            UnsafeMutableRawPointer(out + j).storeBytes(of: result, as: SIMD16<UInt8>.self)
            j += 16
        }
        while j < end {
            let orig = Float(src[j])
            let v = min(255, max(0, orig + weight * (blurred[j] - orig)))
            out[j] = UInt8(v.rounded(.toNearestOrEven))
            j += 1
        }
    }

    /// RGBA: blend premultiplied, then divide by the blended alpha.
    @inline(__always)
    private func writeRowPremultiplied(source: UnsafePointer<UInt8>, range: Range<Int>, weight: Float,
                                       blurred: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<UInt8>) {
        var i = range.lowerBound
        while i < range.upperBound {
            let bytes = UnsafeRawPointer(source + i).loadUnaligned(as: SIMD4<UInt8>.self)
            var orig = V4(SIMD4<Int32>(truncatingIfNeeded: bytes))
            let k = orig[3] * (1 / 255)
            orig *= V4(k, k, k, 1)
            let blur = UnsafeRawPointer(blurred + i).loadUnaligned(as: V4.self)
            var v = orig + weight * (blur - orig)
            let alpha = min(255, max(0, v[3]))
            if alpha < 1e-3 {
                v = V4()
            } else {
                let scale = 255 / alpha
                v *= V4(scale, scale, scale, 0)
                v[3] = alpha
            }
            v = Self.clamp(v)
            let result = SIMD4<UInt8>(truncatingIfNeeded: unsafeBitCast(v + Self.roundingMagic, to: SIMD4<UInt32>.self))
            UnsafeMutableRawPointer(output + i).storeBytes(of: result, as: SIMD4<UInt8>.self)
            i += 4
        }
    }
}

/// Memory shared by the worker threads; each writes disjoint parts.
private struct Shared: @unchecked Sendable {
    /// The intermediate image, `stride` floats a row.
    let rows: UnsafeMutablePointer<Float>
    /// The first and the last input row of the vertical pass.
    let top: UnsafeMutablePointer<Float>
    let bottom: UnsafeMutablePointer<Float>
}
private struct SharedBytes: @unchecked Sendable { let base: UnsafeMutablePointer<UInt8> }

/// Large scratch memory (a 12-megapixel RGB image needs 144 MB of floats).
///
/// Fresh memory costs: the kernel faults it in and zeroes it on first touch, which took a quarter of the
/// filter's time here. So buffers are aligned to 2 MB and marked for transparent huge pages (one fault per
/// 2 MB instead of per 4 KB), and the last one freed is kept for the next image (a worker filters one image
/// after another), up to `maxCachedFloats`.
enum LargeBuffer {
    static let alignment = 2 << 20
    /// 64 Mi floats (256 MB): enough for a 21-megapixel RGB image.
    static let maxCachedFloats = 64 << 20

    private struct Cached: @unchecked Sendable {
        var pointer: UnsafeMutablePointer<Float>?
        var capacity = 0
    }
    private static let cache = Mutex(Cached())

    static func take(floats count: Int) -> UnsafeMutablePointer<Float> {
        let reused = cache.withLock { cached -> Floats? in
            guard let pointer = cached.pointer, cached.capacity >= count else { return nil }
            cached.pointer = nil
            cached.capacity = 0
            return Floats(pointer: pointer)
        }
        return reused?.pointer ?? allocate(floats: count)
    }

    /// Returns a buffer from `take`: kept for the next image when it is the largest so far (within the
    /// limit), freed otherwise.
    static func recycle(_ pointer: UnsafeMutablePointer<Float>, floats count: Int) {
        let capacity = max(count, 1)
        let returned = Floats(pointer: pointer)
        let evicted = cache.withLock { cached -> Floats? in
            guard capacity <= maxCachedFloats, capacity > cached.capacity else { return returned }
            let previous = cached.pointer.map(Floats.init(pointer:))
            cached.pointer = returned.pointer
            cached.capacity = capacity
            return previous
        }
        if let evicted { release(evicted.pointer) }
    }

    /// A pointer that crosses the lock (the memory is owned by whoever holds the pointer).
    private struct Floats: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Float>
    }

    private static func allocate(floats count: Int) -> UnsafeMutablePointer<Float> {
        let bytes = max(1, count) * MemoryLayout<Float>.stride
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, bytes >= alignment ? alignment : 64, bytes) == 0, let raw else {
            fatalError("out of memory allocating \(bytes) bytes")
        }
        #if os(Linux)
        if bytes >= alignment { _ = madvise(raw, (bytes + alignment - 1) / alignment * alignment, MADV_HUGEPAGE) }
        #endif
        return raw.bindMemory(to: Float.self, capacity: count)
    }

    private static func release(_ pointer: UnsafeMutablePointer<Float>) {
        #if canImport(Glibc)
        Glibc.free(pointer)
        #else
        Darwin.free(pointer)
        #endif
    }
}

/// Collects the first error thrown by a worker thread.
private final class ErrorBox: Sendable {
    private let error = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { self.error.withLock { if $0 == nil { $0 = error } } }
    var first: (any Error)? { error.withLock { $0 } }
}
