/// Why a task failed, carried by ``TaskFailure``.
///
/// A numeric value that this version does not know (sent by a newer peer) decodes as ``unspecified``.
public enum FailureCode: UInt32, Sendable, Equatable, CaseIterable {
    /// No particular reason given, or a reason this version does not know.
    case unspecified = 0
    /// The source could not be fetched.
    case download = 1
    /// The bytes are not an image that can be read.
    case decode = 2
    /// Filtering or encoding failed.
    case processing = 3
    /// The task was cancelled.
    case cancelled = 4
    /// A dependency failed or was cancelled.
    case dependency = 5
    /// A size limit was exceeded.
    case limit = 6
    /// An internal error.
    case `internal` = 7
    /// An input the coordinator said the worker holds (``InjectedInput/onWorker``) is no longer there
    /// (evicted from its cache, or its worker left); the coordinator runs its producer again (lineage).
    case inputMissing = 8
    /// The output could not be written to the batch's sink (minor 3); the message names the sink.
    case sink = 180
    /// The task ran longer than the coordinator's task timeout (`--task-timeout`): set by the coordinator,
    /// which cancelled it on its worker.
    case timedOut = 100
    /// The worker running the task died, left while running it, or never received its assignment: set by
    /// the coordinator, transient (the task is retried elsewhere while the batch's `--retries` allow).
    case workerLost = 210
    /// An uploaded file (a client's local input) vanished, changed since it was submitted, could not be read,
    /// or its bytes failed their CRC-32C: the message names the file. Permanent.
    case upload = 360
}

extension FailureCode {
    /// The code's name as logs, `status` and JSON show it: `download`, `limit`, `timed-out`…
    public var name: String {
        switch self {
        case .unspecified: "unspecified"
        case .download: "download"
        case .decode: "decode"
        case .processing: "processing"
        case .cancelled: "cancelled"
        case .dependency: "dependency"
        case .limit: "limit"
        case .internal: "internal"
        case .inputMissing: "input-missing"
        case .timedOut: "timed-out"
        case .sink: "sink"
        case .workerLost: "worker-lost"
        case .upload: "upload"
        }
    }
}
