// Messages between the coordinator and a worker about tasks.

/// A dependency's result injected into its dependent task (sent inside a ``TaskAssignment``).
public struct InjectedInput: Sendable, Equatable {
    /// The task that produced the data.
    public var fromTaskID: String
    /// The produced bytes (for a download, the image file); may be several megabytes.
    public var data: [UInt8]
    /// The media type of `data`, for example `image/jpeg`; empty if unknown.
    public var mediaType: String
    /// The bytes are not sent: the receiving worker produced them (it ran `fromTaskID`) and holds them
    /// in its input cache.
    public var onWorker: Bool

    /// Creates an injected input.
    public init(fromTaskID: String, data: [UInt8], mediaType: String = "", onWorker: Bool = false) {
        self.fromTaskID = fromTaskID
        self.data = data
        self.mediaType = mediaType
        self.onWorker = onWorker
    }
}

/// Sent by the coordinator to a worker that has a free slot: run this task and answer with a
/// ``TaskResult`` that echoes `taskID` and `attempt`.
public struct TaskAssignment: Sendable, Equatable {
    /// The task's identity.
    public var taskID: String
    /// The batch the task belongs to.
    public var batchID: String
    /// The attempt number: a result must echo it; results of older attempts are ignored.
    public var attempt: UInt32
    /// What to do.
    public var kind: TaskKind
    /// For a download: the URL or path to fetch.
    public var source: String
    /// The results of the task's dependencies, injected (for a tilt-shift: the downloaded image).
    public var inputs: [InjectedInput]
    /// For a tilt-shift: the filter's parameters; `nil` when not sent.
    public var parameters: WireTiltShiftParameters?
    /// The coordinator's number for the task (minor 1; 0: none): a worker echoes it in the result, so
    /// that the coordinator finds the task without looking up `taskID`.
    public var taskKey: UInt64
    /// The assignment's number among those sent to this worker since it registered (minor 1; 0: none),
    /// which the worker reports back in ``Heartbeat/lastSequence``.
    public var sequence: UInt64
    /// For a download (minor 3): keep the image on the worker and answer with its metadata only
    /// (``TaskOutput/heldOnWorker``); a manifest still comes back whole.
    public var keepOutput: Bool = false
    /// For a tilt-shift (minor 3): write the output here (a directory every worker reaches, or
    /// `s3://BUCKET/PREFIX`) and answer with its metadata only (``TaskOutput/location``); empty: send it back.
    public var sink: String = ""
    /// The output's name in the sink without extension, unique within the batch (minor 3).
    public var sinkName: String = ""
    /// A field whose value this version cannot act on (an unknown image format), as decoding found it; `nil`
    /// for every assignment a peer of this version sends. Never encoded: the receiving worker answers such an
    /// assignment with a failure naming the field, instead of dropping the whole message.
    public var unreadableField: String?
    /// The S3-compatible endpoint for `s3://` sinks and sources (minor 3; empty: AWS).
    public var s3Endpoint: String = ""
    /// For a download sent to a worker that accepts chained tasks: the tilt-shift to run on its image
    /// right after it, in the same slot, when the image is kept on the worker; `nil`: none.
    public var followOn: ChainedTask? {
        get { followOnStorage?.value }
        set { followOnStorage = newValue.map(Shared.init) }
    }
    /// `followOn` by reference (``Shared``): inline, its size would be added to every assignment the
    /// coordinator keeps (hundreds of thousands), though only a chained download has one.
    private var followOnStorage: Shared<ChainedTask>?

    /// Creates an assignment.
    public init(
        taskID: String,
        batchID: String,
        attempt: UInt32,
        kind: TaskKind,
        source: String = "",
        inputs: [InjectedInput] = [],
        parameters: WireTiltShiftParameters? = nil,
        taskKey: UInt64 = 0,
        sequence: UInt64 = 0
    ) {
        self.taskID = taskID
        self.batchID = batchID
        self.attempt = attempt
        self.kind = kind
        self.source = source
        self.inputs = inputs
        self.parameters = parameters
        self.taskKey = taskKey
        self.sequence = sequence
    }
}

/// What a successful task produced.
public struct TaskOutput: Sendable, Equatable {
    /// The produced bytes (an image file); may be several megabytes.
    public var data: [UInt8]
    /// The media type of `data`, for example `image/png`; empty if unknown.
    public var mediaType: String
    /// The image width in pixels, 0 if unknown (a download does not decode).
    public var width: UInt32
    /// The image height in pixels, 0 if unknown.
    public var height: UInt32
    /// What the worker noticed although the task succeeded (an ignored colour profile, a CMYK JPEG converted
    /// without one); empty for most outputs.
    public var warnings: [String]
    /// A download's image that stayed on the worker that answered, in its input cache (minor 3): `data`
    /// is empty.
    public var heldOnWorker: Bool = false
    /// Where the worker wrote the output, a path or an `s3://` URL (minor 3): `data` is empty.
    public var location: String = ""
    /// The output's size in bytes, when `data` did not travel (minor 3).
    public var size: UInt64 = 0
    /// The CRC-32C (Castagnoli) of the output's bytes, with `location` (minor 3).
    public var crc32c: UInt32 = 0

    /// Creates an output.
    public init(data: [UInt8], mediaType: String = "", width: UInt32 = 0, height: UInt32 = 0, warnings: [String] = []) {
        self.data = data
        self.mediaType = mediaType
        self.width = width
        self.height = height
        self.warnings = warnings
    }

    /// Creates the metadata of an output that did not travel: held on the worker, or written to `location`.
    public init(heldOnWorker: Bool = false, location: String = "", size: UInt64, crc32c: UInt32 = 0,
                mediaType: String, width: UInt32 = 0, height: UInt32 = 0) {
        self.init(data: [], mediaType: mediaType, width: width, height: height)
        self.heldOnWorker = heldOnWorker
        self.location = location
        self.size = size
        self.crc32c = crc32c
    }
}

/// Why a task failed.
public struct TaskFailure: Sendable, Equatable {
    /// The kind of failure.
    public var code: FailureCode
    /// A human-readable explanation.
    public var message: String
    /// Whether another attempt may succeed (connection refused or reset, timeouts, HTTP 408, 429 and 5xx):
    /// the coordinator retries such a task. `false` for every other cause.
    public var isTransient: Bool
    /// The wait the origin asked for before another attempt (HTTP `Retry-After`), in milliseconds; 0: none.
    public var retryAfterMs: UInt32

    /// Creates a failure.
    public init(code: FailureCode, message: String = "", isTransient: Bool = false, retryAfterMs: UInt32 = 0) {
        self.code = code
        self.message = message
        self.isTransient = isTransient
        self.retryAfterMs = retryAfterMs
    }
}

/// How a task ended: exactly one of an output and a failure (the proto's `oneof outcome`).
public enum TaskOutcome: Sendable, Equatable {
    /// The task succeeded and produced this output.
    case output(TaskOutput)
    /// The task failed (or was cancelled: ``FailureCode/cancelled``).
    case failure(TaskFailure)
}

/// Sent by a worker to the coordinator when a task it was assigned finishes, successfully or not.
public struct TaskResult: Sendable, Equatable {
    /// The task's identity, echoed from its ``TaskAssignment``.
    public var taskID: String
    /// The attempt number, echoed from its ``TaskAssignment``.
    public var attempt: UInt32
    /// The output or the failure.
    public var outcome: TaskOutcome
    /// Echoed from ``TaskAssignment/taskKey`` (minor 1); 0 from a worker that does not echo it.
    public var taskKey: UInt64

    /// Creates a result.
    public init(taskID: String, attempt: UInt32, outcome: TaskOutcome, taskKey: UInt64 = 0) {
        self.taskID = taskID
        self.attempt = attempt
        self.outcome = outcome
        self.taskKey = taskKey
    }
}

/// Sent by the coordinator to the worker running a task that must stop (its batch or item was
/// cancelled). The worker answers with a ``TaskResult`` whose failure code is ``FailureCode/cancelled``,
/// unless the task has already finished.
public struct CancelTask: Sendable, Equatable {
    /// The task to cancel: its ``TaskAssignment/taskID``.
    public var taskID: String
    /// Why, for logs.
    public var reason: String
    /// The task's ``TaskAssignment/taskKey`` (minor 2; 0: none), by which the worker finds it.
    public var taskKey: UInt64

    /// Creates a cancellation.
    public init(taskID: String, reason: String = "", taskKey: UInt64 = 0) {
        self.taskID = taskID
        self.reason = reason
        self.taskKey = taskKey
    }
}
