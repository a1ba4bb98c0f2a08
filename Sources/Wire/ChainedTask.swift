// ChainedTask is generated from proto/ (Generated/TaskMessages.generated.swift); what it means beyond its
// fields is here.

extension ChainedTask {
    /// The chained tilt-shift as it would be assigned on its own.
    public init(_ tiltShift: TaskAssignment) {
        self.init(
            taskID: tiltShift.taskID, attempt: tiltShift.attempt, taskKey: tiltShift.taskKey,
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
