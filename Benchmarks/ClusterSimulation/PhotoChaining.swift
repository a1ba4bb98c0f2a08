/// How a simulated worker takes chained tasks, as a real worker's `SHIFTWORK_CHAINED_TASKS` sets it
/// (`WorkerConfiguration.acceptsChainedTasks`, `reportsChainedTasksTogether`).
public enum PhotoChaining: String, Sendable, CaseIterable {
    /// Not announced: the coordinator sends each photo's download and tilt-shift as assignments of their own.
    case off
    /// Announced (a real worker's default): a download carries its tilt-shift, and each result is a message of its own.
    case on
    /// Announced, and a download's result goes with its tilt-shift's in one `TaskResultBatch`.
    case together

    /// Whether the worker announces chained tasks (`WorkerHello.acceptsChainedTasks`).
    public var announced: Bool { self != .off }

    /// The setting named `text` (`off`, `on` or `together`), or `nil`.
    public init?(named text: String) {
        self.init(rawValue: text.lowercased())
    }
}
