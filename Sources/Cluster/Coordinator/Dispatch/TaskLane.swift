import DequeModule
import HeapModule
import Operations

/// The tasks of one batch waiting for a slot, in the batch's own order: higher urgencies first (a
/// tilt-shift whose download finished goes before new downloads), in task-key order within an urgency
/// (keys are handed out as batches are accepted and in item order, so this is submission order even when
/// the operations engine starts a batch's tasks out of order, or a later batch's before an earlier one's
/// under `SchedulingPolicy.fifo`), except that a task pushed to the front (its worker died) goes before the
/// rest. O(1) amortised for keys arriving in order, O(log n) for one arriving behind a larger key.
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
        if front { levels[index].tasks.front.append(key) } else { levels[index].tasks.append(key) }
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

    /// One urgency's tasks, least key first: keys that arrive in order in a FIFO, those that arrive behind a
    /// larger key in a min-heap (`late`), and a stack of tasks pushed to the front.
    private struct Level {
        private var queue = Deque<TaskKey>()
        private var lastQueued: TaskKey = 0
        private var late = Heap<TaskKey>()
        var front: [TaskKey] = []
        var isEmpty: Bool { queue.isEmpty && late.isEmpty && front.isEmpty }

        mutating func append(_ key: TaskKey) {
            if queue.isEmpty || key >= lastQueued {
                queue.append(key)
                lastQueued = key
            } else {
                late.insert(key)
            }
        }

        mutating func pop() -> TaskKey? {
            if let key = front.popLast() { return key }
            if let early = late.min, early < queue.first ?? .max { return late.popMin() }
            return queue.popFirst()
        }
    }
}
