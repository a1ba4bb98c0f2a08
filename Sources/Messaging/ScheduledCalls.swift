/// Calls due at given instants, in the order they are due (for equal instants, in the order scheduled): the
/// one-shot timers of a ``PolledSocketLoop``, as NIO's `EventLoop.scheduleTask` keeps them. A binary
/// min-heap: scheduling and taking the next due call are O(log n), so that thousands of waits (a retry timer
/// per failed task) cost little.
///
/// Not `Sendable`: owned by the loop's thread.
struct ScheduledCalls {
    private struct Entry {
        let due: ContinuousClock.Instant
        let order: UInt64
        let call: @Sendable () -> Void

        func precedes(_ other: Entry) -> Bool { (due, order) < (other.due, other.order) }
    }

    private var heap: [Entry] = []
    private var scheduled: UInt64 = 0

    /// The calls waiting.
    var count: Int { heap.count }

    /// When the next call is due, or `nil` when none waits.
    var nextDue: ContinuousClock.Instant? { heap.first?.due }

    /// Adds `call`, due at `due`.
    mutating func schedule(at due: ContinuousClock.Instant, _ call: @escaping @Sendable () -> Void) {
        scheduled &+= 1
        heap.append(Entry(due: due, order: scheduled, call: call))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the first call due at or before `now`, or `nil` when none is due.
    mutating func takeDue(asOf now: ContinuousClock.Instant) -> (@Sendable () -> Void)? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.call
    }

    /// Drops every waiting call.
    mutating func removeAll() {
        heap.removeAll()
    }
}
