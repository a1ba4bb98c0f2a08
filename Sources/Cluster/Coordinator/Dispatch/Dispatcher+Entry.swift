import Wire

/// What the dispatcher keeps per task, and per slot kept for locality.
extension Dispatcher {
    /// Where a task is in its life on the cluster.
    enum EntryState: Equatable {
        /// Waiting for a free slot.
        case queued
        /// Sent to a worker; its result is awaited.
        case running(worker: PeerIdentity)
        /// Cancelled while running: the worker was told, and its slot stays taken until it confirms.
        case cancelling(worker: PeerIdentity)
    }

    struct Entry {
        var assignment: TaskAssignment
        var state: EntryState
        let priority: Int
        /// Its task ID is in `keysByID` (see there).
        var mappedByID = false
        /// A heartbeat of its worker showed it received and not held (answered, or lost on the way): the
        /// next such heartbeat finds it lost (`Dispatcher.heartbeat`).
        var missingFromHeartbeat = false
        /// Heartbeats from its worker since it was sent that did not show the worker had received it yet.
        var heartbeatsUnseen = 0
        /// For a download: the key of the tilt-shift that consumes its output (locality); 0: none.
        var dependentKey: TaskKey = 0
        /// Sent with its input as a reference to the worker's cache (`InjectedInput.onWorker`).
        var sentByReference = false
        /// The only worker that may run it: its input stayed there (`InputPlacements`).
        var pinnedTo: PeerIdentity?
        /// A retry: the worker where its last attempt failed, passed over while another has a free slot.
        var avoid: PeerIdentity?
        /// Cancelled for running past the task timeout (`Dispatcher.timeOut`): a success of this attempt
        /// that crosses the cancel is still the task's result (`Dispatcher+LateResults`).
        var timedOut = false
        /// An adopted follow-on whose download's timeout cancel crossed it on its worker (the worker's
        /// `CancelTask` for a download reaches the tilt-shift chained to it): its `CANCELLED` is that cancel's,
        /// not the item's, and it is sent again to the same worker (`Dispatcher+LateResults`).
        var crossedCancel = false
    }

    /// What `complete` reads of the entry of the task a result answers, without copying the entry (its
    /// assignment's strings) out of the table.
    struct Answered {
        let state: EntryState
        let sequence: UInt64
        let kind: TaskKind
        let sentByReference: Bool
        let isPinned: Bool
        let dependentKey: TaskKey
        let timedOut: Bool
        let crossedCancel: Bool
    }

    /// A worker slot kept, after a download succeeded there, for the tilt-shift that will use its bytes.
    struct Reservation {
        let worker: PeerIdentity
        let since: ContinuousClock.Instant
    }
}
