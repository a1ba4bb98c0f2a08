/// A list that keeps its first element inline and only the others in an array.
///
/// Most operations have at most one dependency and one dependent (chains, fan-outs, fan-ins seen from the
/// many side), so keeping the first edge inline spares an array allocation, and its release, per edge.
///
/// Change elements with ``update(at:_:)``, which reaches the stored element in place (the subscript returns
/// a copy, which for an edge means retaining its operation and closure).
struct InlineList<Element>: RandomAccessCollection {
    private var first: Element?
    private var rest: [Element] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { first == nil ? 0 : 1 + rest.count }

    subscript(position: Int) -> Element {
        guard position > 0 else {
            guard let first else { preconditionFailure("InlineList: index 0 of an empty list") }
            return first
        }
        return rest[position - 1]
    }

    /// Runs `body` on the element at `position`, in place.
    mutating func update<Result>(at position: Int, _ body: (inout Element) -> Result) -> Result {
        guard position > 0 else {
            guard var element = first.take() else { preconditionFailure("InlineList: index 0 of an empty list") }
            defer { first = element }
            return body(&element)
        }
        return body(&rest[position - 1])
    }

    mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else {
            rest.append(element)
        }
    }

    /// Removes and returns the last element.
    mutating func popLast() -> Element? {
        if let last = rest.popLast() { return last }
        return first.take()
    }

    /// Removes the elements that match, keeping the order of the others.
    mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) {
        var kept = InlineList()
        for element in self where !shouldBeRemoved(element) { kept.append(element) }
        self = kept
    }
}
