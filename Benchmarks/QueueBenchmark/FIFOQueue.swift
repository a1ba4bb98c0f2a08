/// The FIFO queue the engine and the dispatcher used before swift-collections' `Deque` replaced it, kept here
/// as the yardstick (in this module, so specialised: its best case; from Operations it was not). A queue on an
/// array with a moving head: O(1) amortised to append and to take
/// from the front, the consumed front given back once it is most of the storage.
public struct FIFOQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    /// An empty queue.
    public init() {}

    /// Whether nothing is queued.
    public var isEmpty: Bool { head == storage.count }

    /// How many elements are queued.
    public var count: Int { storage.count - head }

    /// The element `popFirst()` would return.
    public var first: Element? { head < storage.count ? storage[head] : nil }

    /// The queued elements, first to last.
    public var elements: ArraySlice<Element> { storage[head...] }

    /// Queues `element` at the back.
    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Takes the element at the front.
    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 256 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes the first queued element that matches; returns it.
    public mutating func removeFirst(where matches: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: matches) else { return nil }
        return storage.remove(at: index)
    }
}
