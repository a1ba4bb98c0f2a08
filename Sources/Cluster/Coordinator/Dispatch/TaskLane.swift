import Operations

/// The tasks of one batch waiting for a slot, in the batch's own order: higher urgencies first (a
/// tilt-shift whose download finished goes before new downloads), first-in first-out within an urgency,
/// except that a task pushed to the front (its worker died) goes before the rest. O(1) amortised.
struct TaskLane {
    let batchID: String
    /// The flow (`FairShareQueue`) the lane belongs to, by index.
    let flow: Int
    /// Whether the lane is in its flow's ring of lanes with tasks.
    var isScheduled = false
    /// Urgencies with their tasks, highest first (usually one or two).
    private var levels: [(urgency: Int, tasks: Level)] = []

    init(batchID: String, flow: Int) {
        self.batchID = batchID
        self.flow = flow
    }

    var isEmpty: Bool { levels.allSatisfy { $0.tasks.isEmpty } }

    mutating func push(_ key: TaskKey, urgency: Int, front: Bool) {
        let index = levelIndex(urgency)
        if front { levels[index].tasks.front.append(key) } else { levels[index].tasks.queue.append(key) }
    }

    /// The next task of the lane (possibly one removed meanwhile: the queue skips those).
    mutating func pop() -> TaskKey? {
        for index in levels.indices {
            if let key = levels[index].tasks.pop() { return key }
        }
        return nil
    }

    private mutating func levelIndex(_ urgency: Int) -> Int {
        if let index = levels.firstIndex(where: { $0.urgency == urgency }) { return index }
        let index = levels.firstIndex(where: { $0.urgency < urgency }) ?? levels.count
        levels.insert((urgency, Level()), at: index)
        return index
    }

    /// One urgency's tasks: a FIFO with a stack of tasks pushed to its front.
    private struct Level {
        var queue = FIFOQueue<TaskKey>()
        var front: [TaskKey] = []
        var isEmpty: Bool { queue.isEmpty && front.isEmpty }

        mutating func pop() -> TaskKey? {
            front.popLast() ?? queue.popFirst()
        }
    }
}
