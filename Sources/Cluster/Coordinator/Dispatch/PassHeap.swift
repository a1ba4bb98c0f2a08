/// The flows with waiting tasks, least pass first (ties: the one that became ready first): only the least
/// element is ever changed or removed.
typealias PassHeap = MinHeap<FlowPass>

/// A flow's place in `PassHeap`: its pass, and the order in which it became ready (for ties).
struct FlowPass: Comparable {
    var pass: UInt64
    let order: UInt64
    let flow: Int

    static func < (lhs: FlowPass, rhs: FlowPass) -> Bool {
        lhs.pass != rhs.pass ? lhs.pass < rhs.pass : lhs.order < rhs.order
    }
}
