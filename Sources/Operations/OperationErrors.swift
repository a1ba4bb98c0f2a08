/// Thrown by ``AsyncOperation/addDependency(_:policy:)`` (and the injection methods) when the new edge
/// would close a cycle of dependencies, which would deadlock every operation on it.
///
/// ``cycle`` lists the operations in "waits for" order, starting and ending with the dependent the
/// edge was added to: `["2", "5", "3", "2"]` means 2 waits for 5, 5 waits for 3, 3 waits for 2.
public struct DependencyCycleError: Error, CustomStringConvertible, Sendable {
    /// Names of the operations on the cycle, in "waits for" order; the first and last are the same.
    public let cycle: [String]
    /// Identifiers (``AsyncOperation/id``) of the same operations, in the same order.
    public let operationIDs: [UInt64]

    /// Says which edge closes which cycle and what to do.
    public var description: String {
        "Dependency cycle: \(cycle.joined(separator: " → ")) (each operation waits for the next). "
            + "The edge \(cycle.first ?? "?") → \(cycle.dropFirst().first ?? "?") was not added because "
            + "no operation on this cycle could ever start; remove one of these edges or restructure the work."
    }
}

/// Errors about using an operation or a queue the wrong way.
public enum OperationUsageError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The operation was already given to a ``WorkQueue`` or a ``GroupOperation``; an operation runs once.
    case alreadyEnqueued(operation: String)
    /// Dependencies, conditions, injections and retry settings are fixed once the operation is ready
    /// or running.
    case alreadyStarted(operation: String)
    /// A child was added to a group that has already finished (or is finishing).
    case groupFinished(group: String, child: String)

    /// Says what went wrong and what to do.
    public var description: String {
        switch self {
        case .alreadyEnqueued(let name):
            return
                "Operation '\(name)' was already added to a queue or group; create a new operation to run the work again."
        case .alreadyStarted(let name):
            return
                "Operation '\(name)' has already started (or finished); configure dependencies, conditions and injections before adding it to a queue."
        case .groupFinished(let group, let child):
            return
                "Cannot add '\(child)' to group '\(group)': the group has finished. Add children before the last child finishes (for example from childDidFinish), or use a group that keeps running until closed."
        }
    }
}

/// The error with which a dependent is cancelled when a dependency whose success it required
/// (``DependencyPolicy/requireSuccess``) was cancelled or failed.
public struct DependencyFailedError: Error, CustomStringConvertible, Sendable {
    /// The name of the dependency that did not succeed.
    public let dependency: String
    /// How the dependency ended: `.cancelled` or `.failed`.
    public let dependencyState: OperationState
    /// The dependency's own errors (the cause). If the dependency was itself cancelled because of a failed
    /// dependency, these are that root cause's errors, not a nested `DependencyFailedError`.
    public let underlyingErrors: [any Error]

    /// Says which dependency did not succeed and why.
    public var description: String {
        "Dependency '\(dependency)' \(dependencyState == .cancelled ? "was cancelled" : "failed")"
            + (underlyingErrors.isEmpty
                ? "" : ": " + underlyingErrors.map { String(describing: $0) }.joined(separator: "; "))
            + ". The dependent required its success, so it was cancelled; fix the dependency or use the .afterCompletion policy."
    }
}

/// The error with which a consumer is cancelled when result injection cannot deliver its input.
public enum InjectionError: Error, CustomStringConvertible, Sendable {
    /// The producer was cancelled or failed; `errors` are the producer's errors (the cause; for a producer
    /// cancelled because of its own failed dependency, that root cause).
    case dependencyDidNotSucceed(dependency: String, state: OperationState, errors: [any Error])
    /// The producer finished but its `output` was `nil`.
    case missingResult(dependency: String)
    /// A manual injection closure threw `error`.
    case injectionFailed(dependency: String, error: any Error)

    /// The errors of the dependency that caused this one (empty for `missingResult`).
    public var underlyingErrors: [any Error] {
        switch self {
        case .dependencyDidNotSucceed(_, _, let errors): return errors
        case .missingResult: return []
        case .injectionFailed(_, let error): return [error]
        }
    }

    /// Says which dependency failed to deliver and why.
    public var description: String {
        switch self {
        case .dependencyDidNotSucceed(let dependency, let state, let errors):
            return
                "Result injection from '\(dependency)' failed: the dependency \(state == .cancelled ? "was cancelled" : "failed")"
                + (errors.isEmpty ? "" : " with: " + errors.map { String(describing: $0) }.joined(separator: "; "))
                + ". The consumer was cancelled; fix the producer or retry it."
        case .missingResult(let dependency):
            return
                "Result injection from '\(dependency)' failed: it finished without setting its output. Make the producer set `output` before returning from execute()."
        case .injectionFailed(let dependency, let error):
            return
                "Result injection from '\(dependency)' failed: the injection closure threw \(error). The consumer was cancelled."
        }
    }
}

/// The error with which an operation fails when one of its conditions is not satisfied.
public struct ConditionFailedError: Error, CustomStringConvertible, Sendable {
    /// The condition's ``OperationCondition/name``.
    public let condition: String
    /// The operation's name.
    public let operation: String
    /// What the condition threw, if it gave a reason.
    public let underlyingError: (any Error)?

    /// Says which condition stopped which operation.
    public var description: String {
        "Condition '\(condition)' of operation '\(operation)' was not satisfied"
            + (underlyingError.map { ": \($0)" } ?? "")
            + "; the operation did not execute."
    }
}

/// The error with which an operation fails when its ``AsyncOperation/timeout`` elapses.
public struct OperationTimeoutError: Error, CustomStringConvertible, Sendable {
    /// The operation's name.
    public let operation: String
    /// The timeout that elapsed.
    public let timeout: Duration

    /// Says which operation timed out.
    public var description: String {
        "Operation '\(operation)' did not finish within \(timeout); its task was cancelled. Raise the timeout or make execute() honour cancellation sooner."
    }
}

/// A condition that evaluated to `false` (used by ``BlockCondition``).
public struct ConditionNotSatisfied: Error, CustomStringConvertible, Sendable {
    /// The condition's name.
    public let condition: String
    /// Says which condition was false.
    public var description: String { "Condition '\(condition)' evaluated to false." }
}

/// Lets `execute()` finish an operation as failed with several errors at once (a group uses it to
/// report every failed child). The operation's ``AsyncOperation/errors`` become `errors`.
public struct MultipleErrors: Error, CustomStringConvertible, Sendable {
    /// The errors, in order.
    public let errors: [any Error]
    /// Creates the aggregate.
    public init(_ errors: [any Error]) { self.errors = errors }
    /// Lists the errors.
    public var description: String {
        "\(errors.count) errors: " + errors.map { String(describing: $0) }.joined(separator: "; ")
    }
}
