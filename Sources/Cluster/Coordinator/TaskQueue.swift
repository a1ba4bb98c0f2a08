/// A first-in first-out queue of task IDs with O(1) amortised push and pop at both useful ends.
struct TaskQueue {
    private var storage: [String] = []
    private var head = 0
    /// Tasks put back at the front (requeued after a worker died) go before the rest.
    private var front: [String] = []

    var count: Int { storage.count - head + front.count }
    var isEmpty: Bool { count == 0 }

    mutating func pushBack(_ id: String) { storage.append(id) }

    mutating func pushFront(_ id: String) { front.append(id) }

    mutating func popFront() -> String? {
        if let id = front.popLast() { return id }
        guard head < storage.count else { return nil }
        let id = storage[head]
        head += 1
        if head > 1_024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return id
    }
}
