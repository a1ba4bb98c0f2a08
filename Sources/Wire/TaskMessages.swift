// Messages between the coordinator and a worker about tasks. Their types are generated from proto/
// (Generated/TaskMessages.generated.swift) but TaskAssignment's, whose storage is richer (its follow-on held by
// reference, `unreadableField`): it is written here, its builder and decoder generated.

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

extension TaskOutput {
    /// Creates the metadata of an output that did not travel: held on the worker, or written to `location`.
    public init(
        heldOnWorker: Bool = false, location: String = "", size: UInt64, crc32c: UInt32 = 0,
        mediaType: String, width: UInt32 = 0, height: UInt32 = 0
    ) {
        self.init(
            data: [], mediaType: mediaType, width: width, height: height, heldOnWorker: heldOnWorker,
            location: location, size: size, crc32c: crc32c)
    }
}

/// How a task ended: exactly one of an output and a failure (the proto's `oneof outcome`).
public enum TaskOutcome: Sendable, Equatable {
    /// The task succeeded and produced this output.
    case output(TaskOutput)
    /// The task failed (or was cancelled: ``FailureCode/cancelled``).
    case failure(TaskFailure)
}
