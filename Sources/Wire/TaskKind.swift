/// What a worker does with a ``TaskAssignment``.
public enum TaskKind: UInt32, Sendable, Equatable, CaseIterable {
    /// Not set; a worker refuses such a task.
    case unspecified = 0
    /// Fetch the assignment's `source` (URL or path) and output its bytes.
    case download = 1
    /// Decode the injected input, apply the tilt-shift filter, encode the result.
    case tiltShift = 2
    /// Do nothing and succeed: measures the cluster's own per-task overhead.
    case noop = 3
}
