/// Download bodies' memory, kept warm for the next downloads of a ``TransferLoop``.
///
/// A body of a megabyte allocated fresh costs its 256 pages: the kernel allocates, clears and maps each
/// (~0.4 ms of the download thread's CPU a 12-MP photo). glibc does not give a freed body's block to the
/// next body: the worker's other threads allocate from the same heaps in between, and each new body ends up
/// at the heap's top, on fresh pages (benchmarks.md, "Warm download bodies"). So the loop keeps the bodies
/// it hands out: each delivered body is ``park(_:)``ed here (the pool holds one more reference to its
/// storage, no bytes are copied), and the next announced body ``take(capacity:)``s the oldest parked one
/// that is large enough.
///
/// **Never reused while held.** A body is an ordinary `[UInt8]`, shared by value: the input cache, the
/// decoder or a test may still hold the parked body. ``take(capacity:)`` empties its own reference with
/// `removeAll(keepingCapacity: true)`, which keeps the storage only when no one else references it (Swift's
/// copy-on-write); a body still held elsewhere is left to its holders untouched, and the taker gets a new,
/// fresh body instead (a miss: that body leaves the pool).
///
/// The youngest parked bodies (``skippedYoungest``) are never taken: they are the ones most likely still
/// held (the photo being filtered, the next one waiting in the input cache). Were they taken, a pool of
/// one or two would find its only body held at every download, drop it, park the fresh one, and never
/// reuse anything; skipped, the pool grows with fresh bodies until its oldest are free again.
///
/// Bounded by count and by bytes (the oldest go first), and emptied by ``releaseAll()`` when the loop
/// has been idle for a while. Loop thread only (the callbacks and the finishing of a transfer with a body
/// run there), like the loop's transfers: hence no lock, and `@unchecked Sendable`.
final class BodyPool: @unchecked Sendable {
    /// The most bodies parked.
    let maxBuffers: Int
    /// The most bytes parked (capacity, held or not); a body larger than this is never parked.
    let maxBytes: Int
    /// How many of the most recently parked bodies ``take(capacity:)`` leaves alone.
    let skippedYoungest: Int
    /// Parked bodies, oldest first.
    private var parked: [[UInt8]] = []
    /// Their capacities' sum.
    private(set) var parkedBytes = 0

    /// What the pool did, for tests and profiles.
    struct Counts: Equatable {
        /// Bodies served from a parked buffer no one held.
        var reused = 0
        /// Parked bodies found still held when taken (the caller made a fresh one instead).
        var held = 0
    }
    private(set) var counts = Counts()

    /// The default bounds: a worker's slots (two per compute thread) each hold a body or two at a time
    /// (downloading, waiting in the input cache, decoding).
    init(maxBuffers: Int = 8, maxBytes: Int = 64 << 20, skippedYoungest: Int = 4) {
        self.maxBuffers = max(0, maxBuffers)
        self.maxBytes = max(0, maxBytes)
        self.skippedYoungest = max(0, skippedYoungest)
    }

    /// How many bodies are parked (held elsewhere or not).
    var count: Int { parked.count }

    /// An empty body with room for `capacity` bytes, from the oldest parked body (but the
    /// ``skippedYoungest``) that has the room, its storage (and pages) warm; `nil` when none is large enough,
    /// or when that body is still held elsewhere (then it is left to its holders untouched, and leaves the pool).
    func take(capacity: Int) -> [UInt8]? {
        // By index, not through a slice of `parked`: a slice alive here would be one more reference to every
        // parked body, and each would look held.
        guard capacity > 0,
            let index = (0..<max(0, parked.count - skippedYoungest)).first(where: { parked[$0].capacity >= capacity })
        else { return nil }
        var body = parked.remove(at: index)
        parkedBytes -= body.capacity
        let storage = Self.address(of: body)
        // Keeps the storage only when this is its last reference; else leaves it to its holders (and allocates
        // an empty buffer, let go at once: the caller makes a fresh body as without the pool).
        body.removeAll(keepingCapacity: true)
        guard Self.address(of: body) == storage else {
            counts.held += 1
            return nil
        }
        counts.reused += 1
        return body
    }

    /// Keeps `body`'s storage for a later ``take(capacity:)`` (the caller hands the same value on to its
    /// consumer). Bodies over ``maxBytes`` are not kept; the oldest go when a bound is passed.
    func park(_ body: [UInt8]) {
        let bytes = body.capacity
        guard bytes > 0, bytes <= maxBytes, maxBuffers > 0 else { return }
        parked.append(body)
        parkedBytes += bytes
        while parked.count > maxBuffers || parkedBytes > maxBytes {
            parkedBytes -= parked.removeFirst().capacity
        }
    }

    /// Lets every parked body go (their memory returns to the allocator once no one else holds them).
    func releaseAll() {
        parked = []
        parkedBytes = 0
    }

    private static func address(of body: [UInt8]) -> UInt {
        body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
