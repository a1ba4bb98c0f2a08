import Wire

/// Where a remote operation's attempts stand, as a pure state machine (result in, next request out): the
/// task as it is sent, its attempt count and worker losses (for the retry schedule), and, for a tilt-shift
/// whose input stayed on a worker, the lineage re-runs of the current attempt (`Lineage`).
/// `ItemRun` holds it and carries its steps out; the retry decision itself is the schedule's.
struct RemoteRun: Sendable {
    /// One task to queue: the assignment, and how the dispatcher should place it.
    struct Request: Sendable {
        let assignment: TaskAssignment
        /// A re-run producer keeps its worker's slot for this dependent (0: none).
        let dependentKey: TaskKey
        /// The operation's own `dependentKey` applies (a download's first run and retries).
        let keepsSlotForDependent: Bool
        /// A retry: the worker where the last attempt failed.
        let avoiding: PeerIdentity?
        /// A download's dependent tilt-shift, as it will be sent after it: chained to it on a worker that
        /// accepts chained tasks (`ChainedFollowOns`).
        var followOn: Shared<TaskAssignment>? = nil
        /// The task runs again (a retry, the producer's re-run): why; `nil` for a first run.
        var resend: TaskResends.Reason? = nil
    }

    /// What to do after a result.
    enum Step: Sendable {
        /// The task succeeded with this output.
        case succeed(TaskOutput)
        /// Send this (the producer again, or the dependent after it).
        case send(Request)
        /// The attempt failed on a worker: retry or fail, as the schedule says.
        case failed(RemoteTaskError)
        /// Finish with this error (a `CancellationError`: the task was withdrawn).
        case stop(any Error)
    }

    /// The task as sent for the current attempt (its attempt number grows with retries).
    private(set) var assignment: TaskAssignment
    let lineage: Lineage?
    /// The current attempt, counting those a previous run of the coordinator journaled.
    private(set) var attempt: Int
    /// Attempts lost with their workers so far.
    var workerLosses: Int
    private var avoiding: PeerIdentity?
    /// Producer re-runs within the current attempt.
    private var reruns = 0
    /// The dependent as sent after the last re-run (`nil`: `assignment` itself).
    private var dependent: TaskAssignment?
    /// The request out is the producer's re-run.
    private var rerunningProducer = false
    /// For a download: its dependent tilt-shift as first sent, chained to every attempt (boxed: most runs
    /// have none, `Shared`).
    let followOn: Shared<TaskAssignment>?

    init(
        assignment: TaskAssignment, lineage: Lineage?, attempt: Int, workerLosses: Int,
        followOn: Shared<TaskAssignment>? = nil
    ) {
        self.assignment = assignment
        self.lineage = lineage
        self.attempt = attempt
        self.workerLosses = workerLosses
        self.followOn = followOn
    }

    /// The first request of the current attempt.
    var request: Request {
        Request(
            assignment: assignment, dependentKey: 0, keepsSlotForDependent: lineage == nil, avoiding: avoiding,
            followOn: lineage == nil ? followOn : nil)
    }

    /// The step after `result`, the result of the request sent last.
    mutating func step(after result: Result<TaskOutput, any Error>) -> Step {
        switch result {
        case .success(let output):
            guard rerunningProducer, let lineage else { return .succeed(output) }
            rerunningProducer = false
            let next = lineage.follow(dependent ?? assignment, output: output)
            dependent = next
            return .send(Request(assignment: next, dependentKey: 0, keepsSlotForDependent: false, avoiding: nil))
        case .failure(let error as RemoteTaskError):
            if let lineage, !rerunningProducer, error.failure.code == .inputMissing, reruns < Lineage.maxReruns {
                reruns += 1
                rerunningProducer = true
                // The producer runs again with this dependent chained to it, as `step` will send it after.
                let dependent = dependent ?? assignment
                return .send(
                    Request(
                        assignment: lineage.rerun(reruns), dependentKey: dependent.taskKey,
                        keepsSlotForDependent: false, avoiding: nil,
                        followOn: Shared(lineage.follow(dependent, output: Lineage.heldImage)),
                        resend: .inputMissing))
            }
            return .failed(error)
        case .failure(let error):
            return .stop(error)
        }
    }

    /// The first request of the next attempt, after `error` failed this one: a new attempt number (a late
    /// result of the old one is stale), away from the worker where it failed; lineage starts over.
    mutating func retry(after error: RemoteTaskError) -> Request {
        attempt += 1
        assignment.attempt = max(assignment.attempt, error.attempt) + 1
        avoiding = error.worker
        reruns = 0
        dependent = nil
        rerunningProducer = false
        var next = request
        next.resend = error.resendReason
        return next
    }
}
