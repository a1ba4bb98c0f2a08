import Wire

/// A task that failed on a worker (or was timed out by the coordinator), with the code and message, the
/// attempt that failed and where it ran.
struct RemoteTaskError: Error, CustomStringConvertible {
    let failure: TaskFailure
    /// The attempt number of the failed attempt (`TaskResult.attempt`); 0 when unknown.
    var attempt: UInt32 = 0
    /// The worker it ran on, when known.
    var worker: PeerIdentity?
    /// That worker's ID, for status.
    var workerID = ""
    /// For an attempt lost with its worker: whether the worker or only the assignment was lost.
    var lossReason: TaskResends.Reason?
    var description: String { failure.message }

    /// Why the task runs again if it is retried (`TaskResends`).
    var resendReason: TaskResends.Reason { lossReason ?? TaskResends.Reason(retrying: failure.code) }
}
