/// A value held by reference. Large optional values that most holders leave `nil` (a download's chained
/// follow-on: `TaskAssignment.followOn`, and the coordinator's copies of it) are stored this way so that
/// every holder without one pays a pointer, not the value's whole inline size: inline, a chained
/// tilt-shift added ~130 MiB to 200,000 no-op tasks in flight at the coordinator.
public final class Shared<Value: Sendable>: Sendable {
    /// The value.
    public let value: Value

    /// Holds `value`.
    public init(_ value: Value) {
        self.value = value
    }
}

extension Shared: Equatable where Value: Equatable {
    /// Equal when they hold equal values.
    public static func == (lhs: Shared, rhs: Shared) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }
}
