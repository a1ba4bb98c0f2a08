import CImageCodecs
import Dispatch
import Runtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tilt-shift's blur and blend over an image that streams through in rows: rows go in top to bottom,
/// filtered rows come out top to bottom, and only a window of rows is ever held, whatever the image's height.
///
/// The Gaussian is the recursive one (`RecursiveGaussian`: 14 multiply-adds per sample per axis whatever σ),
/// in the C kernels of CImageCodecs (AVX2 + FMA where the CPU has them, chosen at run time; SSE otherwise);
/// along an axis whose σ is at most `exactSigmaLimit`, the exact one (`ExactGaussian`: a sampled kernel,
/// ⌈4σ⌉ + 1 multiply-adds per sample), whose shape the recursive filter misses by about 1 % of an edge.
///
/// - Horizontally, each row is filtered as it arrives.
/// - Vertically, the forward recursion follows the rows as they arrive (it needs the three rows above). The
///   backward recursion runs from below: for the strip of rows [y0, y0 + strip) it starts `lookahead` rows
///   further down, from the forward values there, and by the time it reaches the strip the error of that
///   start has decayed below 10⁻⁴ of itself (`RecursiveGaussian.settlingLength`): under 0.03 of a level
///   before rounding. At the bottom of the image it starts from the exact Triggs–Sdika values instead.
///   Each finished row is blended with the original through its weight and leaves.
///
/// - With the exact kernel along y there is no recursion: a strip's row y is the kernel over rows y − r … y + r
///   (r = ⌈4σ⌉, edges repeated), so the lookahead is r and r rows above the strip are kept; rows whose weight
///   is 0 skip the vertical pass.
///
/// So the window is `strip + lookahead` rows (336 for σ = 10: 48 MB of floats for a 12000-pixel-wide RGB
/// image, 16 MB for a 4000-pixel one), the backward pass does `lookahead / strip` (half) more work than on a
/// whole image, and edges repeat. RGBA is blurred premultiplied. The output does not depend on `threads`.
///
/// Use: `inputSpace()` gives room for the next rows (decode into it), `commit(rows:emit:)` filters them and
/// hands every finished row to `emit`, in order, in contiguous runs that are valid during the call. A row may
/// be blurred from other values than the ones it is blended with (`setBlurInput`, when made with
/// `separateBlurInput`): the planar JPEG path blurs rows corrected for the decoder's clipping.
///
/// The blend weights (`BlendMask`) are one per row (the focus line horizontal: today's path, its kernels
/// untouched) or one per pixel (a turned focus line), computed row by row into a row of weights just before the
/// row is blended. With `levels` > 1 (the progressive falloff) the filter keeps that many blurs at σ·k/levels,
/// each with its own float window and backward ring (all recursive, the lookahead of the largest), and the blend
/// interpolates between them by weight (`blend_levels`).
final class StripBlender: @unchecked Sendable {
    // @unchecked Sendable: the worker threads of one call write disjoint rows or columns of its memory.
    let width: Int
    let height: Int
    let channels: Int
    /// Samples per row, and their bytes (a sample is 1 byte, or 2 with `bytesPerSample` 2: 16-bit, host order).
    let samples: Int
    let rowBytes: Int
    /// Rows finished together; the backward pass starts `lookahead` rows below a strip.
    let strip: Int
    let lookahead: Int
    /// Rows held: the window.
    let capacity: Int
    /// Rows above the oldest unfinished one that must stay in the window (the exact kernel's radius along y,
    /// 0 for the recursive filter or when the whole image fits).
    private let history: Int

    /// The largest σ (pixels, per axis) filtered with the exact kernel instead of the recursive one. Chosen by
    /// measuring (docs/benchmarks.md): with the limit at 6, Core Image's σ 10 put its chroma planes (σ 5) through
    /// the exact kernel and the planar filter took 80 ms of CPU instead of 36 on 12 MP; at 3 the chroma of
    /// recipes up to σ 6 is exact and σ 10 keeps its speed.
    static let exactSigmaLimit = 3.0
    /// Bytes of the window (original rows, floats and scratch): what the filter holds per image.
    var windowBytes: Int {
        byteRowsSize + floatRowsSize + stride * MemoryLayout<Float>.stride + scratchBytes * max(1, threads)
    }

    let mask: BlendMask
    /// The largest weight of each row (0: the row stays sharp).
    let rowMaxima: [Float]
    /// Blurs at σ·k/levels, k = 1…levels (1: the one blur of the recipe).
    let levels: Int
    /// Whether the blend goes through `blend_levels` with a row of weights (a turned line or several levels)
    /// instead of today's `blend` with one weight per row.
    private let blendsPerSample: Bool
    /// The row of weights (`stride` floats); each thread fills and reads its own columns of it. For a vertical
    /// focus line it is filled once.
    let weightRow: UnsafeMutablePointer<Float>
    let weightRowIsFixed: Bool
    let threads: Int
    let token: CancellationToken
    let kernels: UnsafePointer<sw_blur_kernels>
    /// The horizontal and vertical coefficients of each level, in memory of their own (read by every worker
    /// thread).
    private let gaussians: UnsafeMutablePointer<sw_recursive_gaussian>
    let verticalGaussians: UnsafeMutablePointer<sw_recursive_gaussian>
    /// The exact kernels, along an axis whose σ is at most the limit (nil: the recursive filter there).
    private let exact: UnsafeMutablePointer<sw_fir_gaussian>?
    private let verticalExact: UnsafeMutablePointer<sw_fir_gaussian>?
    private let verticalRadius: Int
    /// Floats per float row (at least samples + 1, a multiple of 16), and the columns the vertical kernels
    /// cover (samples rounded up to 16).
    let stride: Int
    let columns: Int
    /// Whether the image passes unchanged (no blur, or every weight 0).
    private let passThrough: Bool

    /// Original rows, `capacity` of `samples` bytes (plus slack: an RGB row is read one byte past its end);
    /// finished rows are blended in place.
    private let byteRows: UnsafeMutablePointer<UInt8>
    private let byteRowsSize: Int
    /// With `separateBlurInput`: the rows to blur instead of the original ones (same layout as `byteRows`), and
    /// which window rows have one (set by `setBlurInput`, consumed by `commit`).
    private let blurRows: UnsafeMutablePointer<UInt8>?
    private var hasBlurRow: [Bool]
    /// Per level: the horizontal pass's output, then (in place) the forward vertical pass's: `capacity` rows of
    /// `stride`; then row 0 after the horizontal pass (the forward pass's start, as if the edge repeated above),
    /// the last row after it (the backward pass's exact start), and the backward pass's three rows.
    private let floatRows: UnsafeMutablePointer<Float>
    private let floatRowsSize: Int
    /// Floats of one level's block.
    private let levelFloats: Int
    private let scratch: UnsafeMutableRawPointer
    private let scratchBytes: Int

    /// Rows committed, rows through the horizontal and forward passes, rows handed to `emit`.
    private(set) var received = 0
    private var forwarded = 0
    private(set) var emitted = 0

    /// Rows between two looks at the cancellation token in long loops (a few milliseconds of work).
    static let rowsPerCancelCheck = 16

    /// - Parameters:
    ///   - sigma: the Gaussian's σ in pixels; `verticalSigma` when it differs along y (a chroma plane
    ///     subsampled in one direction only).
    ///   - mask: the blend weights: 0 keeps the original, 1 takes the blurred one.
    ///   - levels: blurs at σ·k/levels blended by weight (`TiltShiftFalloff.progressive`); 1: the one blur.
    ///   - kernels: the SIMD variant (`.automatic`: the best the CPU runs).
    ///   - exactUpTo: the largest σ filtered with the exact kernel (at most `ExactGaussian.largestSigma`; 0 never).
    ///   - separateBlurInput: whether `setBlurInput` may give rows other values to blur.
    convenience init(
        width: Int, height: Int, channels: Int, sigma: Double, verticalSigma: Double? = nil,
        weights: [Float], threads: Int, kernels variant: KernelVariant = .automatic,
        exactUpTo: Double = exactSigmaLimit, separateBlurInput: Bool = false, token: CancellationToken
    ) {
        precondition(weights.count == height)
        self.init(
            width: width, height: height, channels: channels, sigma: sigma, verticalSigma: verticalSigma,
            mask: .rows(weights), threads: threads, kernels: variant, exactUpTo: exactUpTo,
            separateBlurInput: separateBlurInput, token: token)
    }

    init(
        width: Int, height: Int, channels: Int, sigma: Double, verticalSigma: Double? = nil, mask: BlendMask,
        levels: Int = 1, threads: Int, kernels variant: KernelVariant = .automatic, exactUpTo: Double = exactSigmaLimit,
        separateBlurInput: Bool = false, bytesPerSample: Int = 1, token: CancellationToken
    ) {
        precondition(
            width > 0 && height > 0 && [1, 3, 4].contains(channels) && levels >= 1 && [1, 2].contains(bytesPerSample))
        if case .rows(let weights) = mask { precondition(weights.count == height) }
        self.width = width
        self.height = height
        self.channels = channels
        self.samples = width * channels
        self.rowBytes = samples * bytesPerSample
        self.mask = mask
        self.rowMaxima = (0..<height).map { mask.rowMaximum($0) }
        self.levels = levels
        if case .rows = mask, levels == 1 { self.blendsPerSample = false } else { self.blendsPerSample = true }
        self.threads = max(1, threads)
        self.token = token
        self.kernels = bytesPerSample == 2 ? variant.deepKernels : variant.kernels
        self.gaussians = .allocate(capacity: levels)
        self.verticalGaussians = .allocate(capacity: levels)
        for level in 0..<levels {
            let share = Double(level + 1) / Double(levels)
            gaussians[level] = RecursiveGaussian(sigma: max(sigma * share, 0.5)).kernelCoefficients
            verticalGaussians[level] =
                RecursiveGaussian(sigma: max((verticalSigma ?? sigma) * share, 0.5)).kernelCoefficients
        }
        let gy = RecursiveGaussian(sigma: max(verticalSigma ?? sigma, 0.5))
        self.passThrough = sigma <= 0 || rowMaxima.allSatisfy { $0 == 0 }
        // Levels are all recursive: the exact kernel's window (rows above the strip) is not kept per level.
        let limit = levels > 1 ? 0 : min(exactUpTo, ExactGaussian.largestSigma)
        func exactKernel(_ s: Double) -> ExactGaussian? { s > 0 && s <= limit ? ExactGaussian(sigma: s) : nil }
        let ex = exactKernel(sigma)
        let ey = exactKernel(verticalSigma ?? sigma)
        self.exact = ex.map { kernel in
            let pointer = UnsafeMutablePointer<sw_fir_gaussian>.allocate(capacity: 1)
            pointer.initialize(to: kernel.kernelCoefficients)
            return pointer
        }
        self.verticalExact = ey.map { kernel in
            let pointer = UnsafeMutablePointer<sw_fir_gaussian>.allocate(capacity: 1)
            pointer.initialize(to: kernel.kernelCoefficients)
            return pointer
        }
        self.verticalRadius = ey?.radius ?? 0
        self.stride = (samples + 16) & ~15
        self.columns = (samples + 15) & ~15
        let lookahead = passThrough ? 0 : (ey?.radius ?? gy.settlingLength())
        let strip = ey == nil ? max(32, (2 * lookahead + 15) & ~15) : 32
        self.lookahead = lookahead
        self.strip = strip
        let history = passThrough ? 0 : verticalRadius
        self.capacity = min(height, strip + lookahead + history)
        self.history = capacity == height ? 0 : history
        self.byteRowsSize = capacity * rowBytes + 64
        self.byteRows = .allocate(capacity: byteRowsSize)
        byteRows.initialize(repeating: 0, count: byteRowsSize)
        self.blurRows = separateBlurInput ? .allocate(capacity: byteRowsSize) : nil
        blurRows?.initialize(repeating: 0, count: byteRowsSize)
        self.hasBlurRow = [Bool](repeating: false, count: separateBlurInput ? capacity : 0)
        let floatRowCount = passThrough ? 0 : capacity + 5
        self.levelFloats = floatRowCount * stride
        self.floatRowsSize = levels * levelFloats * MemoryLayout<Float>.stride
        self.floatRows = Self.allocate(bytes: floatRowsSize).bindMemory(to: Float.self, capacity: levels * levelFloats)
        self.weightRow = Self.allocate(bytes: stride * MemoryLayout<Float>.stride)
            .bindMemory(to: Float.self, capacity: stride)
        self.weightRowIsFixed = mask.isRowInvariant
        if weightRowIsFixed { mask.fill(row: 0, into: weightRow, samples: 0..<samples, channels: channels) }
        self.scratchBytes = Int(sw_blur_scratch_bytes(Int32(width), Int32(channels)))
        self.scratch = Self.allocate(bytes: scratchBytes * self.threads)
    }

    deinit {
        gaussians.deallocate()
        verticalGaussians.deallocate()
        free(weightRow)
        exact?.deallocate()
        verticalExact?.deallocate()
        byteRows.deallocate()
        blurRows?.deallocate()
        free(floatRows)
        free(scratch)
    }

    /// Zeroed memory aligned for the kernels' vectors (zeroed: the padding columns go through the vertical
    /// pass too, and must stay finite).
    private static func allocate(bytes: Int) -> UnsafeMutableRawPointer {
        var raw: UnsafeMutableRawPointer?
        let size = max(64, bytes)
        guard posix_memalign(&raw, 64, size) == 0, let raw else { fatalError("out of memory allocating \(size) bytes") }
        memset(raw, 0, size)
        return raw
    }

    @inline(__always) func byteRow(_ y: Int) -> UnsafeMutablePointer<UInt8> {
        byteRows + (y % capacity) * rowBytes
    }
    /// The values row `y` is blurred from: its own, or those `setBlurInput` gave it.
    @inline(__always) private func blurInput(_ y: Int) -> UnsafeMutablePointer<UInt8> {
        if let blurRows, hasBlurRow[y % capacity] { return blurRows + (y % capacity) * rowBytes }
        return byteRow(y)
    }
    @inline(__always) func floatRow(_ y: Int, level: Int = 0) -> UnsafeMutablePointer<Float> {
        y < 0 ? top(level) : floatRows + level * levelFloats + (y % capacity) * stride
    }
    /// Row 0 after the horizontal pass, the last row after it, the backward pass's ring: after the window.
    @inline(__always) private func top(_ level: Int) -> UnsafeMutablePointer<Float> {
        floatRows + level * levelFloats + capacity * stride
    }
    @inline(__always) func bottom(_ level: Int) -> UnsafeMutablePointer<Float> { top(level) + stride }
    @inline(__always) func backwardRows(_ level: Int) -> UnsafeMutablePointer<Float> { top(level) + 2 * stride }

    /// Room for the next rows, contiguous: fill up to `rows` rows of `rowBytes` bytes and `commit` them.
    /// `rows` is 0 only once every row has been committed.
    func inputSpace() -> (pointer: UnsafeMutablePointer<UInt8>, rows: Int) {
        let free = capacity - history - (received - emitted)
        let untilWrap = capacity - received % capacity
        return (byteRow(received), max(0, min(free, untilWrap, height - received)))
    }

    /// Makes row `offset` of the next `inputSpace()` rows blur from `values` (`samples` bytes) instead of its
    /// original values, which it is still blended with (`rowBytes`). Only with `separateBlurInput`, before `commit`.
    func setBlurInput(row offset: Int, from values: UnsafePointer<UInt8>) {
        guard let blurRows else { preconditionFailure("StripBlender made without separateBlurInput") }
        let slot = (received + offset) % capacity
        (blurRows + slot * rowBytes).update(from: values, count: rowBytes)
        hasBlurRow[slot] = true
    }

    /// Takes the next `rows` rows (written into `inputSpace()`), filters what can be filtered and hands the
    /// finished rows to `emit(rows, count, firstRow)`. Throws `ImagingError.cancelled` when the token says so.
    func commit(rows: Int, emit: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        precondition(rows >= 0 && rows <= inputSpace().rows)
        try token.check()
        received += rows
        if passThrough {
            try flush(through: received, emit: emit)
            return
        }
        try forwardPass(through: received)
        if !hasBlurRow.isEmpty {
            for y in (received - rows)..<received { hasBlurRow[y % capacity] = false }
        }
        while emitted < height {
            let needed = min(height, emitted + strip + lookahead)
            if forwarded < needed { break }
            let end = min(height, emitted + strip)
            if verticalExact != nil {
                try exactPass(strip: emitted..<end)
            } else {
                try backwardPass(strip: emitted..<end, from: needed - 1)
            }
            try flush(through: end, emit: emit)
        }
    }

    private func flush(through end: Int, emit: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        while emitted < end {
            let run = min(end - emitted, capacity - emitted % capacity)
            try emit(byteRow(emitted), run, emitted)
            emitted += run
        }
    }

    // MARK: - Horizontal and forward vertical passes

    /// Rows of a horizontal batch: filtered, then through the forward pass while still in cache.
    private static let batchRows = 16

    private func forwardPass(through end: Int) throws {
        while forwarded < end {
            let first = forwarded
            let count = min(Self.batchRows, end - first, capacity - first % capacity)
            try horizontal(rows: first..<(first + count))
            if verticalExact != nil {
                forwarded += count
                continue
            }
            for level in 0..<levels {
                if first == 0 { top(level).update(from: floatRow(0, level: level), count: stride) }
                if first + count == height {
                    bottom(level).update(from: floatRow(height - 1, level: level), count: stride)
                }
            }
            try parallelColumns { range in
                for level in 0..<self.levels {
                    let g = self.verticalGaussians + level
                    for y in first..<(first + count) {
                        self.kernels.pointee.forward(
                            g, self.floatRow(y, level: level), self.floatRow(y - 1, level: level),
                            self.floatRow(y - 2, level: level), self.floatRow(y - 3, level: level),
                            range.lowerBound, range.upperBound)
                    }
                }
            }
            forwarded += count
        }
    }

    private func horizontal(rows: Range<Int>) throws {
        let group = channels == 1 ? 16 : 4
        let groups = (rows.count + group - 1) / group
        let workers = min(threads, groups)
        try parallel(workers) { worker in
            let lower = rows.lowerBound + group * (groups * worker / workers)
            let upper = min(rows.upperBound, rows.lowerBound + group * (groups * (worker + 1) / workers))
            guard lower < upper else { return }
            let sources: [UnsafePointer<UInt8>?] = (lower..<upper).map { UnsafePointer(self.blurInput($0)) }
            if let exact = self.exact {
                let destinations: [UnsafeMutablePointer<Float>?] = (lower..<upper).map { self.floatRow($0) }
                self.kernels.pointee.fir_horizontal(
                    exact, sources, destinations, Int32(upper - lower), Int32(self.width), Int32(self.channels),
                    self.scratch + worker * self.scratchBytes)
                return
            }
            for level in 0..<self.levels {
                let destinations: [UnsafeMutablePointer<Float>?] = (lower..<upper).map {
                    self.floatRow($0, level: level)
                }
                self.kernels.pointee.horizontal(
                    self.gaussians + level, sources, destinations, Int32(upper - lower), Int32(self.width),
                    Int32(self.channels), self.scratch + worker * self.scratchBytes)
            }
        }
    }

    // MARK: - Backward vertical pass and blend

    /// Runs the backward recursion from row `start` up to the top of `strip`, blending the strip's rows.
    private func backwardPass(strip: Range<Int>, from start: Int) throws {
        if levels > 1 { return try backwardPassOfLevels(strip: strip, from: start) }
        let exact = start == height - 1
        try parallelColumns { range in
            let (begin, end) = (range.lowerBound, range.upperBound)
            let ring = self.backwardRows(0)
            var q1 = ring
            var q2 = ring + self.stride
            var q3 = ring + 2 * self.stride
            var y: Int
            if exact {
                self.kernels.pointee.end(
                    self.verticalGaussians, self.bottom(0), self.floatRow(start), self.floatRow(start - 1),
                    self.floatRow(start - 2),
                    q1, q2, q3, begin, end)
                self.blend(row: start, blurred: q1, strip: strip, columns: range)
                y = start - 1
            } else {
                // Mid-image: start as if the forward values stayed constant below; the error decays before the strip.
                for q in [q1, q2, q3] { (q + begin).update(from: self.floatRow(start) + begin, count: end - begin) }
                y = start
            }
            while y >= strip.lowerBound {
                if y % Self.rowsPerCancelCheck == 0 { try self.token.check() }
                let destination = q3
                self.kernels.pointee.backward(
                    self.verticalGaussians, self.floatRow(y), destination, q1, q2, q3, begin, end)
                (q1, q2, q3) = (destination, q1, q2)
                self.blend(row: y, blurred: q1, strip: strip, columns: range)
                y -= 1
            }
        }
    }

    /// The exact vertical pass over `strip`, blending each row as it is done (rows of weight 0 are skipped).
    private func exactPass(strip: Range<Int>) throws {
        guard verticalExact != nil else { return }
        let radius = verticalRadius
        try parallelColumns { range in
            var rows = [UnsafePointer<Float>?](repeating: nil, count: 2 * radius + 1)
            let blurred = self.backwardRows(0)
            for y in strip where self.rowMaxima[y] != 0 {
                if y % Self.rowsPerCancelCheck == 0 { try self.token.check() }
                for k in -radius...radius {
                    rows[k + radius] = UnsafePointer(self.floatRow(min(self.height - 1, max(0, y + k))))
                }
                guard let kernel = self.verticalExact else { return }
                self.kernels.pointee.fir_vertical(kernel, rows, blurred, range.lowerBound, range.upperBound)
                self.blend(row: y, blurred: blurred, strip: strip, columns: range)
            }
        }
    }

    @inline(__always)
    private func blend(row y: Int, blurred: UnsafeMutablePointer<Float>, strip: Range<Int>, columns: Range<Int>) {
        if blendsPerSample {
            var level: UnsafePointer<Float>? = UnsafePointer(blurred)
            blendLevels(row: y, levels: &level, strip: strip, columns: columns)
            return
        }
        guard strip.contains(y) else { return }
        let weight = rowMaxima[y]  // with one weight per row, the row's weight
        let end = min(columns.upperBound, samples)
        guard weight != 0, columns.lowerBound < end else { return }
        let row = byteRow(y)
        if channels == 4 {
            kernels.pointee.blend_premultiplied(row, blurred, row, weight, columns.lowerBound, end)
        } else {
            kernels.pointee.blend(row, blurred, row, weight, columns.lowerBound, end)
        }
    }
}
