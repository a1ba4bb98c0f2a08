/// A condition evaluated after an operation's dependencies have finished and before it executes.
///
/// Conditions are evaluated in the order they were added, except that ``MutualExclusion`` conditions
/// are evaluated last, sorted by category (so two operations never wait for each other's categories).
/// Evaluation runs on the task that will run the operation, so it may suspend, and that task is cancelled
/// with the operation; the operation does not wait for the answer then: it finishes as cancelled at
/// once, and the answer is ignored. Throwing means "not satisfied": the operation then fails with a
/// ``ConditionFailedError`` wrapping what was thrown, without executing.
public protocol OperationCondition: Sendable {
    /// A name for diagnostics (it appears in ``ConditionFailedError``).
    var name: String { get }
    /// Returns if the condition holds for `operation`; throws if it does not.
    func evaluate(for operation: AsyncOperation) async throws
}

/// A condition given as a closure that returns `true` when the operation may execute.
public struct BlockCondition: OperationCondition {
    /// The name used in diagnostics.
    public let name: String
    private let check: @Sendable (AsyncOperation) async throws -> Bool

    /// Creates a condition; `check` returning `false` makes the operation fail with
    /// ``ConditionFailedError`` (underlying ``ConditionNotSatisfied``).
    public init(name: String = "BlockCondition", _ check: @escaping @Sendable (AsyncOperation) async throws -> Bool) {
        self.name = name
        self.check = check
    }

    /// Runs the closure.
    public func evaluate(for operation: AsyncOperation) async throws {
        guard try await check(operation) else { throw ConditionNotSatisfied(condition: name) }
    }
}

/// Requires that no dependency was cancelled or failed. Where it does not hold, the operation fails
/// with a ``ConditionFailedError`` whose underlying error is the first dependency's
/// ``DependencyFailedError``. (Compare ``DependencyPolicy/requireSuccess``, which cancels the
/// dependent as soon as the dependency ends badly instead of failing it.)
public struct NoFailedDependencies: OperationCondition {
    /// "NoFailedDependencies".
    public let name = "NoFailedDependencies"

    /// Creates the condition.
    public init() {}

    /// Checks each dependency's state.
    public func evaluate(for operation: AsyncOperation) async throws {
        for dependency in operation.dependencies {
            let state = dependency.state
            if state == .cancelled || state == .failed {
                throw DependencyFailedError(
                    dependency: dependency.name, dependencyState: state, underlyingErrors: dependency.errors)
            }
        }
    }
}
