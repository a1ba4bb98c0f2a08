/// The flows with waiting tasks, least pass first (ties: the one that became ready first): a binary
/// min-heap in which only the least element is ever changed or removed. O(log n) per operation.
struct PassHeap {
    struct Element {
        var pass: UInt64
        let order: UInt64
        let flow: Int

        func precedes(_ other: Element) -> Bool {
            pass != other.pass ? pass < other.pass : order < other.order
        }
    }

    private var elements: [Element] = []

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child].precedes(elements[parent]) else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Gives the least element a new pass and restores the order.
    mutating func updateMin(pass: UInt64) {
        guard !elements.isEmpty else { return }
        elements[0].pass = pass
        siftDown(0)
    }

    mutating func removeMin() {
        guard !elements.isEmpty else { return }
        elements.swapAt(0, elements.count - 1)
        elements.removeLast()
        siftDown(0)
    }

    mutating func removeAll() { elements.removeAll() }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < elements.count else { return }
            var least = left
            if left + 1 < elements.count, elements[left + 1].precedes(elements[left]) { least = left + 1 }
            guard elements[least].precedes(elements[parent]) else { return }
            elements.swapAt(parent, least)
            parent = least
        }
    }
}
