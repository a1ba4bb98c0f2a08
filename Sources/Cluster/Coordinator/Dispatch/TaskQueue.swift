/// Task keys waiting for a slot: higher priorities first, first-in first-out within a priority.
/// Push, pop and remove are O(1) amortised (removal is lazy: a removed ID is skipped when popped).
struct PriorityTaskQueue {
    private var levels: [Int: Level] = [:]
    private var priorities: [Int] = []  // descending
    /// Removed IDs not popped yet (skipped when they are).
    private(set) var removed: Set<TaskKey> = []
    private(set) var count = 0

    private struct Level {
        var storage: [TaskKey] = []
        var head = 0
        var front: [TaskKey] = []
        var isEmpty: Bool { head == storage.count && front.isEmpty }

        mutating func pop() -> TaskKey? {
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

    var isEmpty: Bool { count == 0 }

    /// Adds `id` at the back of its priority.
    mutating func push(_ id: TaskKey, priority: Int) {
        ensureLevel(priority)
        levels[priority]?.storage.append(id)
        count += 1
    }

    /// Adds `id` at the front of its priority (a task whose worker died goes before the rest).
    mutating func pushFront(_ id: TaskKey, priority: Int) {
        ensureLevel(priority)
        levels[priority]?.front.append(id)
        count += 1
    }

    /// Removes `id` wherever it is (lazily; once nothing is left, the removed IDs are let go at once,
    /// so that tasks cancelled while no worker pops them do not pile up).
    mutating func remove(_ id: TaskKey) {
        removed.insert(id)
        count -= 1
        if count == 0 { removeAll() }
    }

    /// The next ID to dispatch.
    mutating func pop() -> TaskKey? {
        for priority in priorities {
            while let id = levels[priority]?.pop() {
                if removed.remove(id) != nil { continue }
                count -= 1
                if count == 0 { removeAll() }
                return id
            }
        }
        return nil
    }

    /// Empties the queue, with the IDs it skips lazily.
    private mutating func removeAll() {
        levels = [:]
        priorities = []
        removed = []
    }

    private mutating func ensureLevel(_ priority: Int) {
        guard levels[priority] == nil else { return }
        levels[priority] = Level()
        priorities.append(priority)
        priorities.sort(by: >)
    }
}
