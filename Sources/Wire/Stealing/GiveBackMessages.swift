// Work stealing at a batch's tail: the coordinator asks a worker for a task that waits behind its busy
// compute threads, to give it to a worker whose compute thread is idle (docs/protocol.md, "Giving a task back").

/// Sent by the coordinator to a worker that announced ``WorkerHello/giveBackThreads``: give this task back
/// if it has not started. The worker answers with ``TaskGivenBack``.
public struct GiveBackTask: Sendable, Equatable {
    /// The task's ``TaskAssignment/taskKey``.
    public var taskKey: UInt64
    /// The attempt asked for (``TaskAssignment/attempt``): the answer echoes it.
    public var attempt: UInt32

    /// Creates a request to give a task back.
    public init(taskKey: UInt64, attempt: UInt32) {
        self.taskKey = taskKey
        self.attempt = attempt
    }
}

/// A worker's answer to ``GiveBackTask``.
public struct TaskGivenBack: Sendable, Equatable {
    /// The task asked for: its ``TaskAssignment/taskKey``.
    public var taskKey: UInt64
    /// The attempt asked for.
    public var attempt: UInt32
    /// `true`: the worker dropped the task and will never run it nor send its result (the coordinator
    /// assigns it elsewhere). `false`: it started (or finished: its result comes or came): nothing changes.
    public var givenBack: Bool

    /// Creates an answer.
    public init(taskKey: UInt64, attempt: UInt32, givenBack: Bool) {
        self.taskKey = taskKey
        self.attempt = attempt
        self.givenBack = givenBack
    }
}
