import Runtime
import Synchronization
import Wire

/// Collects events produced on other threads (items whose last operation finished) for an actor, and
/// hands them over in groups: the first event after a drain starts one task that drains everything
/// gathered by the time it runs. A burst of n events costs one task and one actor hop, not n.
///
/// While the owner drains the inbox itself anyway (`ownerDrains`: the coordinator at the end of a wake-up),
/// a post schedules nothing: events posted then cost no task at all.
final class CompletionInbox<Event: Sendable>: Sendable {
    /// `spare`: an emptied array handed back by the owner (`recycle`), which the next drain leaves in
    /// place of the drained one, so that a burst's posts append into storage already grown to a burst's size.
    private let state = InlineLock<(events: [Event], scheduled: Bool, spare: [Event])>(([], false, []))
    private let drainedByOwner = Atomic<Bool>(false)

    init() {}

    /// Adds an event. When no drain is pending, calls `schedule` (on the posting thread), which must
    /// start a task that calls `drain()`; not while the owner drains (see `ownerDrains`).
    func post(_ event: Event, schedule: () -> Void) {
        let needsDrain = state.withLock { state -> Bool in
            state.events.append(event)
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if needsDrain && !drainedByOwner.load(ordering: .acquiring) { schedule() }
    }

    /// Whether the owner drains the inbox itself (posts schedule nothing meanwhile). After setting it
    /// back to `false`, the owner must drain once more: an event posted while it was `true` may be there.
    var ownerDrains: Bool {
        get { drainedByOwner.load(ordering: .acquiring) }
        set { drainedByOwner.store(newValue, ordering: .releasing) }
    }

    /// Every event posted since the last drain, in order. The next post schedules a new drain.
    func drain() -> [Event] {
        state.withLock { state in
            state.scheduled = false
            defer {
                state.events = state.spare
                state.spare = []
            }
            return state.events
        }
    }

    /// The most events whose storage `recycle` keeps: a larger array is freed, since a rare burst
    /// (200,000 requests of batches submitted at once) would otherwise hold its size for the process's life.
    static var largestSpare: Int { 8_192 }

    /// Hands back the array of a drain once its events are handled: emptied, its storage is kept for
    /// the posts after the next drain (up to ``largestSpare`` events). Growing a new array for every
    /// burst, one reallocation per doubling (the larger of them from the shared heap), cost the
    /// coordinator more than its events' own work.
    func recycle(_ drained: consuming [Event]) {
        var buffer = drained
        guard buffer.capacity <= Self.largestSpare else { return }
        buffer.removeAll(keepingCapacity: true)
        state.withLock { state in
            if buffer.capacity > state.spare.capacity { swap(&state.spare, &buffer) }
        }
    }
}
