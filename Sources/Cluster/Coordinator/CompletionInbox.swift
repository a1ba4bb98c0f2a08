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

/// What a remote operation asks of the coordinator (`Coordinator.run`): queue this task, and resume
/// `continuation` with its result.
struct RemoteRequest: Sendable {
    let assignment: TaskAssignment
    let priority: Int
    /// The task leaves the count of tasks waiting to start.
    let wasWaiting: Bool
    /// For a download: the tilt-shift to keep the worker's slot for.
    let dependentKey: TaskKey
    /// A retry: the worker where the last attempt failed, to avoid when another has a free slot.
    let avoiding: PeerIdentity?
    let call: RemoteCall
    let continuation: CheckedContinuation<TaskOutput, any Error>
}

/// One remote operation's call: whether the operation was cancelled before the coordinator took its
/// request. Its cancellation handler only sets the flag (nothing hops back onto the coordinator); the
/// coordinator, which cancelled the operation itself, answers such a request with `CancellationError`.
final class RemoteCall: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// Marks the call cancelled.
    func cancel() { cancelled.store(true, ordering: .releasing) }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
