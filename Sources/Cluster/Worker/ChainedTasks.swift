/// How a worker takes chained tasks (a download sent with its tilt-shift: `TaskAssignment.followOn`):
/// `shiftwork worker --chained-tasks`, `SHIFTWORK_CHAINED_TASKS`.
public enum ChainedTasks: String, Sendable, CaseIterable {
    /// Not announced: the coordinator sends a photo's tilt-shift as an assignment of its own after its
    /// download (the flow of workers older than chained tasks).
    case off
    /// Announced (the default): the worker runs a download's tilt-shift right after it, in the same slot,
    /// and answers each with a message of its own.
    case on
    /// Announced, and a download's result is held back and sent with its tilt-shift's in one message: one
    /// message a photo, but the coordinator counts the download as running until the filter ends (a worker
    /// lost meanwhile costs the download an attempt; docs/protocol.md, "Chained tasks").
    case together
}
