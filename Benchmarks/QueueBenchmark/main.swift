// Queues: the hand-written ones against swift-collections', on the dispatcher's patterns (issue #30: "Deque
// and Heap where they serve as well as the hand-written queues (measured)"). Each pair alternates in one
// process, 15 rounds by default; prints the median ns per operation, the range, and the ratio.
//   swift build -c release --product QueueBenchmark && .build/release/QueueBenchmark [ROUNDS]
// The figures of record are in docs/benchmarks.md, "Queues: hand-written or swift-collections".
import DequeModule
import HeapModule

#if canImport(Glibc)
import Glibc
#endif

@inline(never) func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }
func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
struct Key: Comparable {
    var pass: UInt64
    let order: UInt64
    let flow: Int
    static func < (l: Key, r: Key) -> Bool { l.pass != r.pass ? l.pass < r.pass : l.order < r.order }
}

let n = 1_000_000
// FIFO: burst of n appends then drain; and steady state (append one, pop one) with 1,000 queued.
func fifoBurst() -> Double {
    let t = now()
    var q = FIFOQueue<UInt64>()
    for i in 0..<n { q.append(UInt64(i)) }
    var s: UInt64 = 0
    while let x = q.popFirst() { s &+= x }
    blackHole(s)
    return now() - t
}
func dequeBurst() -> Double {
    let t = now()
    var q = Deque<UInt64>()
    for i in 0..<n { q.append(UInt64(i)) }
    var s: UInt64 = 0
    while let x = q.popFirst() { s &+= x }
    blackHole(s)
    return now() - t
}
func fifoSteady() -> Double {
    var q = FIFOQueue<UInt64>()
    for i in 0..<1000 { q.append(UInt64(i)) }
    let t = now()
    var s: UInt64 = 0
    for i in 0..<n {
        q.append(UInt64(i))
        s &+= q.popFirst()!
    }
    blackHole(s)
    return now() - t
}
func dequeSteady() -> Double {
    var q = Deque<UInt64>()
    for i in 0..<1000 { q.append(UInt64(i)) }
    let t = now()
    var s: UInt64 = 0
    for i in 0..<n {
        q.append(UInt64(i))
        s &+= q.popFirst()!
    }
    blackHole(s)
    return now() - t
}
// Heap: fair-share pattern: 1,000 flows; take the least, raise its pass (updateMin / replaceMin).
func minHeapFair() -> Double {
    var h = MinHeap<Key>()
    for f in 0..<1000 { h.insert(Key(pass: UInt64(f % 7), order: UInt64(f), flow: f)) }
    let t = now()
    var s = 0
    for _ in 0..<n {
        s &+= h.min!.flow
        h.updateMin { $0.pass &+= 1000 }
    }
    blackHole(s)
    return now() - t
}
func heapFair() -> Double {
    var h = Heap<Key>()
    for f in 0..<1000 { h.insert(Key(pass: UInt64(f % 7), order: UInt64(f), flow: f)) }
    let t = now()
    var s = 0
    for _ in 0..<n {
        var m = h.min!
        s &+= m.flow
        m.pass &+= 1000
        h.replaceMin(with: m)
    }
    blackHole(s)
    return now() - t
}
func minHeapChurn() -> Double {
    var h = MinHeap<Key>()
    let t = now()
    var s = 0
    for i in 0..<n {
        h.insert(Key(pass: UInt64((i &* 2_654_435_761) % 100_000), order: UInt64(i), flow: i))
        if i % 2 == 1 { s &+= h.popMin()!.flow }
    }
    while let x = h.popMin() { s &+= x.flow }
    blackHole(s)
    return now() - t
}
func heapChurn() -> Double {
    var h = Heap<Key>()
    let t = now()
    var s = 0
    for i in 0..<n {
        h.insert(Key(pass: UInt64((i &* 2_654_435_761) % 100_000), order: UInt64(i), flow: i))
        if i % 2 == 1 { s &+= h.popMin()!.flow }
    }
    while let x = h.popMin() { s &+= x.flow }
    blackHole(s)
    return now() - t
}

let pairs: [(String, () -> Double, () -> Double)] = [
    ("FIFO burst 1M (FIFOQueue vs Deque)", fifoBurst, dequeBurst),
    ("FIFO steady 1M at 1k (FIFOQueue vs Deque)", fifoSteady, dequeSteady),
    ("fair-share 1M takes over 1k flows (MinHeap.updateMin vs Heap.replaceMin)", minHeapFair, heapFair),
    ("churn 1M inserts, half popped (MinHeap vs Heap)", minHeapChurn, heapChurn),
]
func ns(_ x: Double) -> String { fmt(x / Double(n) * 1e9) }
func fmt(_ x: Double) -> String {
    let v = (x * 100).rounded() / 100
    return "\(v)"
}
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 15
for (name, a, b) in pairs {
    var ra: [Double] = []
    var rb: [Double] = []
    for _ in 0..<rounds {
        ra.append(a())
        rb.append(b())
    }  // alternated in one process
    ra.sort()
    rb.sort()
    let m = rounds / 2
    let ours = "\(ns(ra[m])) ns/op (\(ns(ra[0]))–\(ns(ra[rounds - 1])))"
    let theirs = "\(ns(rb[m])) ns/op (\(ns(rb[0]))–\(ns(rb[rounds - 1])))"
    let ratio: Double = rb[m] / ra[m]
    print("\(name): ours \(ours), swift-collections \(theirs); collections ÷ ours median \(fmt(ratio))")
}
