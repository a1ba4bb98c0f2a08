import Wire

/// What a remote operation asks of the coordinator (`RemoteTaskRunning.request`): queue this task, and
/// tell `operation` its result.
struct RemoteRequest: Sendable {
    let assignment: TaskAssignment
    let priority: Int
    /// The task leaves the count of tasks waiting to start.
    let wasWaiting: Bool
    /// For a download: the tilt-shift to keep the worker's slot for.
    let dependentKey: TaskKey
    /// A retry: the worker where the last attempt failed, to avoid when another has a free slot.
    let avoiding: PeerIdentity?
    /// For a download: its dependent tilt-shift, to chain to it on a worker that accepts chained tasks.
    var followOn: Shared<TaskAssignment>? = nil
    /// A task that runs again (a retry, a lineage re-run): why, for `TaskResends`; `nil` for a first run.
    var resend: TaskResends.Reason? = nil
    /// The operation to finish (or advance) with the result (`RemoteTaskOperation.received`).
    let operation: RemoteTaskOperation
}
