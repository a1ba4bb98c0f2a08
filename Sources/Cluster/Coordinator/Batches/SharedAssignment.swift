import Wire

/// A task assignment held by reference. A `TaskAssignment` is several hundred bytes inline (strings, arrays,
/// optional parameters); an optional one stored in every remote operation (a download's chained follow-on,
/// `nil` for every other task) would add that to each of them: 200,000 no-op tasks in flight cost the
/// coordinator ~160 MiB more that way. Boxed, a task without one pays a pointer.
final class SharedAssignment: Sendable {
    /// The assignment.
    let assignment: TaskAssignment

    init(_ assignment: TaskAssignment) {
        self.assignment = assignment
    }
}
