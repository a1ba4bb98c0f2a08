import Wire

/// One task of a batch as the coordinator tracks it: a download, or a tilt-shift fed by a download.
struct TaskRecord {
    enum State: Equatable {
        /// Waiting for its dependency's result.
        case waiting
        /// Ready, in the dispatch queue.
        case queued
        /// Sent to a worker, awaiting its result.
        case running(worker: PeerIdentity)
        case succeeded
        case failed
        case cancelled

        var isFinished: Bool {
            switch self {
            case .succeeded, .failed, .cancelled: true
            case .waiting, .queued, .running: false
            }
        }
    }

    let id: String
    let batchID: String
    let itemIndex: Int
    let kind: TaskKind
    /// For a download: the URL or path to fetch.
    let source: String
    /// A result must echo the attempt it answers; older attempts' results are ignored.
    var attempt: UInt32 = 1
    var state: State
    /// The dependency's output, injected into this task's assignment (tilt-shift).
    var input: InjectedInput?
    /// The task this one feeds (a download's tilt-shift).
    var dependent: String?
}
