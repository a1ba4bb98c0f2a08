import Synchronization
import Wire

/// Collects events produced on other threads (items whose last operation finished) for an actor, and
/// hands them over in groups: the first event after a drain starts one task that drains everything
/// gathered by the time it runs. A burst of n events costs one task and one actor hop, not n.
final class CompletionInbox<Event: Sendable>: Sendable {
    private let state = Mutex<(events: [Event], scheduled: Bool)>(([], false))

    init() {}

    /// Adds an event. When no drain is pending, calls `schedule` (on the posting thread), which must
    /// start a task that calls `drain()`.
    func post(_ event: Event, schedule: () -> Void) {
        let needsDrain = state.withLock { state -> Bool in
            state.events.append(event)
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if needsDrain { schedule() }
    }

    /// Every event posted since the last drain, in order. The next post schedules a new drain.
    func drain() -> [Event] {
        state.withLock { state in
            state.scheduled = false
            defer { state.events = [] }
            return state.events
        }
    }
}

/// What a remote operation asks of the coordinator (`Coordinator.run`).
enum RemoteRequest: Sendable {
    /// Queue this task; resume `continuation` with its result.
    case run(TaskAssignment, priority: Int, wasWaiting: Bool, dependentKey: TaskKey, call: RemoteCall,
             CheckedContinuation<TaskOutput, any Error>)
    /// The operation was cancelled: withdraw its task (by key).
    case withdraw(TaskKey)
}

/// One remote operation's call, shared by its request and its cancellation handler.
final class RemoteCall: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// Marks the call cancelled (before its withdrawal is posted).
    func cancel() { cancelled.store(true, ordering: .releasing) }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
