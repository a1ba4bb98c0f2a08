/// A list that keeps its first element inline and only the others in an array.
///
/// Most operations have at most one dependency and one dependent (chains, fan-outs, fan-ins seen from the
/// many side), so keeping the first edge inline spares an array allocation, and its release, per edge.
///
/// Change elements with ``update(at:_:)``, which reaches the stored element in place (the subscript returns
/// a copy, which for an edge means retaining its operation and closure).
struct InlineList<Element>: RandomAccessCollection {
    private var first: Element?
    /// `nil` until a second element arrives (an empty array would still be retained and released).
    private var rest: [Element]?

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { first == nil ? 0 : 1 + (rest?.count ?? 0) }

    subscript(position: Int) -> Element {
        guard position > 0 else {
            guard let first else { preconditionFailure("InlineList: index 0 of an empty list") }
            return first
        }
        guard let rest else { preconditionFailure("InlineList: index \(position) out of range") }
        return rest[position - 1]
    }

    /// Runs `body` on the element at `position`, in place.
    mutating func update<Result>(at position: Int, _ body: (inout Element) -> Result) -> Result {
        guard position > 0 else {
            guard var element = first.take() else { preconditionFailure("InlineList: index 0 of an empty list") }
            defer { first = element }
            return body(&element)
        }
        guard var list = rest.take() else { preconditionFailure("InlineList: index \(position) out of range") }
        defer { rest = list }
        return body(&list[position - 1])
    }

    mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else if rest == nil {
            rest = [element]
        } else {
            rest?.append(element)
        }
    }

    /// The positions of the elements for which `predicate` is true, found without copying any (a plain
    /// scan of the subscript would retain and release each element's references).
    func indices(where predicate: (Element) -> Bool) -> [Int] {
        guard let first else { return [] }
        var found: [Int] = []
        if predicate(first) { found.append(0) }
        rest?.withUnsafeBufferPointer { buffer in
            for index in buffer.indices where predicate(buffer[index]) { found.append(index + 1) }
        }
        return found
    }

    /// Removes and returns the last element.
    mutating func popLast() -> Element? {
        if let last = rest?.popLast() { return last }
        return first.take()
    }

    /// Removes the elements that match, keeping the order of the others.
    mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) {
        var kept = InlineList()
        for element in self where !shouldBeRemoved(element) { kept.append(element) }
        self = kept
    }
}
