import Wire

/// One task running in a simulated worker's slot, and what the worker sends when it ends
/// (``SimulatedPhotoWorker/runs(answering:coordinatorAcceptsBatches:)``).
public struct SimulatedRun: Sendable, Equatable {
    /// The running task's key (a heartbeat reports it as held while it runs).
    public var taskKey: UInt64
    /// The messages sent when it ends, each its results; none when its result is held back to go with the
    /// next run's (a chained download's, with `PhotoChaining.together`).
    public var messagesAtEnd: [[TaskResult]]

    /// A run of the task `taskKey` that ends by sending `messagesAtEnd`.
    public init(taskKey: UInt64, messagesAtEnd: [[TaskResult]]) {
        self.taskKey = taskKey
        self.messagesAtEnd = messagesAtEnd
    }
}
