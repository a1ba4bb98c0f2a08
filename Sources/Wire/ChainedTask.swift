/// A tilt-shift chained to the download that carries it (``TaskAssignment/followOn``): when the download
/// succeeds and its image stays on the worker, the worker runs this on it at once, in the same slot, and
/// answers it with a ``TaskResult`` of its own. Its batch, source and S3 endpoint are the download's.
public struct ChainedTask: Sendable, Equatable {
    /// The tilt-shift's task ID.
    public var taskID: String
    /// Its attempt number, which its result echoes.
    public var attempt: UInt32
    /// Its task key, echoed in its result and named by a ``CancelTask`` for it.
    public var taskKey: UInt64
    /// The filter's parameters; `nil` when not sent.
    public var parameters: WireTiltShiftParameters?
    /// Where to write the output, as ``TaskAssignment/sink`` (empty: send it back).
    public var sink: String
    /// The output's name in the sink, as ``TaskAssignment/sinkName``.
    public var sinkName: String

    /// Creates a chained task.
    public init(taskID: String, attempt: UInt32, taskKey: UInt64, parameters: WireTiltShiftParameters? = nil,
                sink: String = "", sinkName: String = "") {
        self.taskID = taskID
        self.attempt = attempt
        self.taskKey = taskKey
        self.parameters = parameters
        self.sink = sink
        self.sinkName = sinkName
    }

    /// The chained tilt-shift as it would be assigned on its own.
    public init(_ tiltShift: TaskAssignment) {
        self.init(taskID: tiltShift.taskID, attempt: tiltShift.attempt, taskKey: tiltShift.taskKey,
                  parameters: tiltShift.parameters, sink: tiltShift.sink, sinkName: tiltShift.sinkName)
    }
}

extension TaskAssignment {
    /// The tilt-shift chained to this download, as an assignment of its own, its input the download's image
    /// held on the worker (`InjectedInput.onWorker`); `nil` when it has none.
    public var chainedAssignment: TaskAssignment? {
        guard let followOn else { return nil }
        var tiltShift = TaskAssignment(
            taskID: followOn.taskID, batchID: batchID, attempt: followOn.attempt, kind: .tiltShift, source: source,
            inputs: [InjectedInput(fromTaskID: taskID, data: [], onWorker: true)], parameters: followOn.parameters,
            taskKey: followOn.taskKey, sequence: sequence)
        tiltShift.sink = followOn.sink
        tiltShift.sinkName = followOn.sinkName
        tiltShift.s3Endpoint = s3Endpoint
        return tiltShift
    }
}
