/// The binary min-heap the dispatcher's queues used before swift-collections' `Heap` replaced it, kept here as
/// the yardstick it was measured against.
struct MinHeap<Element: Comparable> {
    private var elements: [Element] = []

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the least element.
    @discardableResult
    mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let least = elements.removeLast()
        siftDown(0)
        return least
    }

    /// Changes the least element in place (`change` may make it larger) and restores the order.
    mutating func updateMin(_ change: (inout Element) -> Void) {
        guard !elements.isEmpty else { return }
        change(&elements[0])
        siftDown(0)
    }

    mutating func removeAll() { elements.removeAll() }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < elements.count else { return }
            var least = left
            if left + 1 < elements.count, elements[left + 1] < elements[left] { least = left + 1 }
            guard elements[least] < elements[parent] else { return }
            elements.swapAt(parent, least)
            parent = least
        }
    }
}
