/// Task keys, least first: a binary min-heap. O(log n) per insertion and removal.
struct TaskKeyHeap {
    private var keys: [TaskKey] = []

    var isEmpty: Bool { keys.isEmpty }
    var min: TaskKey? { keys.first }

    mutating func insert(_ key: TaskKey) {
        keys.append(key)
        var child = keys.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard keys[child] < keys[parent] else { break }
            keys.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMin() -> TaskKey? {
        guard let least = keys.first else { return nil }
        let last = keys.removeLast()
        guard !keys.isEmpty else { return least }
        keys[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < keys.count, keys[left] < keys[smallest] { smallest = left }
            if right < keys.count, keys[right] < keys[smallest] { smallest = right }
            guard smallest != parent else { return least }
            keys.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
