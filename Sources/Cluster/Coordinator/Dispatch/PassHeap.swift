import HeapModule

/// The flows with waiting tasks, least pass first (ties: the one that became ready first): only the least
/// element is ever changed or removed. swift-collections' `Heap` (a min-max heap) measured as fast as the
/// binary min-heap it replaced, or faster (docs/benchmarks.md, "Queues: hand-written or swift-collections").
typealias PassHeap = Heap<FlowPass>

/// A flow's place in `PassHeap`: its pass, and the order in which it became ready (for ties).
struct FlowPass: Comparable {
    var pass: UInt64
    let order: UInt64
    let flow: Int

    static func < (lhs: FlowPass, rhs: FlowPass) -> Bool {
        lhs.pass != rhs.pass ? lhs.pass < rhs.pass : lhs.order < rhs.order
    }
}
