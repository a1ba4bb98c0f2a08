import CImageCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tilt-shift's blur on a halved plane: each 2×2 block of the rows (as they stream in) is averaged into one
/// pixel, the halved plane streams through a `StripBlender` that blurs it at σ' = √(σ² − 1) / 2 (weight 1
/// everywhere: it emits the blurred plane, rounded), and each full row is blended with the blurred plane doubled
/// back bilinearly (`sw_double_blend_row`) through its weight.
///
/// A Gaussian of σ ≥ 4 leaves nothing a halved plane cannot hold (its response at the halved plane's Nyquist
/// frequency, a quarter cycle per pixel, is e^(−2π²σ²/16) < 10⁻⁸), so the halving's aliasing is blurred away
/// and the doubling interpolates a smooth surface. The box average (variance ¼ pixel² per axis) and the
/// bilinear doubling (¾ pixel² at its quarter-pixel phases) blur a little themselves: σ' takes them out, so the
/// whole is the recipe's σ. The blur then filters a quarter of the samples; the cost is the halving, the
/// doubling and a rounding of the blurred plane to bytes (about 0.3 of a level). Accuracy against the exact
/// recipe: docs/benchmarks.md (Imaging) and `DecimatedBlurTests`.
///
/// One weight per row only (the focus line upright, one level), gray or RGB; `StreamingBlenders.make` decides.
/// The doubling and blend run on the calling thread; the halved blur on `threads`.
final class DecimatedStripBlender: StreamingBlender {
    /// The smallest σ (pixels, along both axes) blurred on a halved plane.
    static let sigmaLimit = 4.0
    /// The smallest plane (pixels, each way) `StreamingBlenders.make` blurs halved.
    static let smallestSide = 256

    let width: Int
    let height: Int
    let channels: Int
    let samples: Int
    let halfWidth: Int
    let halfHeight: Int
    let capacity: Int
    private let halfSamples: Int
    private let weights: [Float]
    private let inner: StripBlender
    /// Original rows (`capacity` of `samples` bytes), blended in place when finished.
    private let byteRows: UnsafeMutablePointer<UInt8>
    /// With `separateBlurInput`: the rows to halve instead of the original ones, and which have one.
    private let blurRows: UnsafeMutablePointer<UInt8>?
    private var hasBlurRow: [Bool]
    /// The last blurred half row the inner blender emitted (the one above the next run).
    private let previousHalf: UnsafeMutablePointer<UInt8>
    /// Scratch of `sw_double_blend_row`: the half row between two, and the doubled row.
    private let scratch: UnsafeMutablePointer<Float>

    private(set) var received = 0
    private(set) var emitted = 0
    /// Half rows handed to the inner blender, and received back blurred.
    private var halved = 0
    private var blurredHalves = 0
    /// Full rows blended (from `emitted` up to this, they wait to be emitted).
    private var finished = 0

    init(
        width: Int, height: Int, channels: Int, sigma: Double, verticalSigma: Double? = nil, weights: [Float],
        threads: Int, kernels variant: KernelVariant = .automatic, separateBlurInput: Bool = false,
        token: CancellationToken
    ) {
        precondition(width >= 2 && height >= 2 && [1, 3].contains(channels) && weights.count == height)
        self.width = width
        self.height = height
        self.channels = channels
        self.samples = width * channels
        self.halfWidth = (width + 1) / 2
        self.halfHeight = (height + 1) / 2
        self.halfSamples = halfWidth * channels
        self.weights = weights
        func halved(_ s: Double) -> Double { (max(s * s - 1, 1)).squareRoot() / 2 }
        self.inner = StripBlender(
            width: halfWidth, height: halfHeight, channels: channels, sigma: halved(sigma),
            verticalSigma: verticalSigma.map(halved), weights: [Float](repeating: 1, count: halfHeight),
            threads: threads,
            kernels: variant, token: token)
        // Unfinished full rows: twice the inner window's half rows, a pair being halved and a row being doubled.
        self.capacity = min(height, 2 * inner.capacity + 32)
        self.byteRows = .allocate(capacity: capacity * samples + 64)
        self.blurRows = separateBlurInput ? .allocate(capacity: capacity * samples + 64) : nil
        self.hasBlurRow = [Bool](repeating: false, count: separateBlurInput ? capacity : 0)
        self.previousHalf = .allocate(capacity: halfSamples + 64)
        self.scratch = .allocate(capacity: halfSamples + channels + samples + 64)
    }

    deinit {
        byteRows.deallocate()
        blurRows?.deallocate()
        previousHalf.deallocate()
        scratch.deallocate()
    }

    @inline(__always) private func byteRow(_ y: Int) -> UnsafeMutablePointer<UInt8> {
        byteRows + (y % capacity) * samples
    }
    @inline(__always) private func blurInput(_ y: Int) -> UnsafeMutablePointer<UInt8> {
        if let blurRows, hasBlurRow[y % capacity] { return blurRows + (y % capacity) * samples }
        return byteRow(y)
    }

    func inputSpace() -> (pointer: UnsafeMutablePointer<UInt8>, rows: Int) {
        let free = capacity - (received - emitted)
        let untilWrap = capacity - received % capacity
        return (byteRow(received), max(0, min(free, untilWrap, height - received)))
    }

    func setBlurInput(row offset: Int, from values: UnsafePointer<UInt8>) {
        guard let blurRows else { preconditionFailure("DecimatedStripBlender made without separateBlurInput") }
        let slot = (received + offset) % capacity
        (blurRows + slot * samples).update(from: values, count: samples)
        hasBlurRow[slot] = true
    }

    func commit(rows: Int, emit: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        precondition(rows >= 0 && rows <= inputSpace().rows)
        received += rows
        // Half row k needs full rows 2k and 2k + 1 (the last row alone in an odd height).
        while halved < halfHeight, 2 * halved + 1 < received || received == height {
            let ready = received == height ? halfHeight - halved : (received / 2) - halved
            let (space, available) = inner.inputSpace()
            let count = min(ready, available)
            precondition(count > 0, "the halved blur's window is full")
            for r in 0..<count {
                let k = halved + r
                let (top, bottom) = (2 * k, min(2 * k + 1, height - 1))
                sw_decimate_rows(
                    blurInput(top), blurInput(bottom), space + r * halfSamples, Int32(width), Int32(channels))
                if !hasBlurRow.isEmpty {
                    hasBlurRow[top % capacity] = false
                    hasBlurRow[bottom % capacity] = false
                }
            }
            halved += count
            try inner.commit(rows: count) { blurred, count, first in
                try self.blend(halves: blurred, count: count, first: first, emit: emit)
            }
        }
    }

    /// Blends every full row whose two half rows are now blurred (half rows `first` ..< `first + count`, in
    /// `halves`, `halfSamples` apart), then emits the finished rows.
    private func blend(
        halves: UnsafePointer<UInt8>, count: Int, first: Int,
        emit: (UnsafePointer<UInt8>, Int, Int) throws -> Void
    ) throws {
        precondition(first == blurredHalves)
        for k in first..<(first + count) {
            let current = halves + (k - first) * halfSamples
            let above = k == first ? (k == 0 ? current : UnsafePointer(previousHalf)) : current - halfSamples
            // Full row y lies between half rows (y − 1) / 2 and min((y + 1) / 2, last): done once the lower is here.
            while finished < height, min((finished + 1) / 2, halfHeight - 1) <= k {
                let y = finished
                let weight = weights[y]
                if weight != 0 {
                    let lower = y == 0 ? 0 : (y - 1) / 2
                    let (top, bottom) = lower == k ? (current, current) : (above, current)
                    let share: Float = y == 0 ? 0 : (y % 2 == 1 ? 0.25 : 0.75)
                    let row = byteRow(y)
                    sw_double_blend_row(
                        row, top, bottom, share, weight, row, Int32(halfWidth), Int32(width),
                        Int32(channels), scratch)
                }
                finished += 1
            }
        }
        previousHalf.update(from: halves + (count - 1) * halfSamples, count: halfSamples)
        blurredHalves += count
        while emitted < finished {
            let run = min(finished - emitted, capacity - emitted % capacity)
            try emit(byteRow(emitted), run, emitted)
            emitted += run
        }
    }
}
