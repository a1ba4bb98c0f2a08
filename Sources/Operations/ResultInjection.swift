/// An operation that produces a typed result (the seeds' `ResultOperationType`).
///
/// `output` is read by ``ResultConsuming/injectResult(from:)`` after the operation has finished
/// successfully; set it before `execute()` returns. ``ResultOperation``, ``TransformOperation`` and
/// ``CompletableOperation`` conform already.
public protocol ResultProducing: AsyncOperation {
    /// The type of the result.
    associatedtype Output: Sendable
    /// The result, or `nil` before the operation has produced it.
    var output: Output? { get }
}

/// An operation that consumes a typed input delivered by a producer (the seeds'
/// `AutomaticInjectionOperationType`).
///
/// ``injectResult(from:)`` sets `input` after the producer has finished and before this operation may
/// start. ``TransformOperation`` conforms already.
public protocol ResultConsuming: AsyncOperation {
    /// The type of the input.
    associatedtype Input: Sendable
    /// The input; `nil` until it is injected (or set by hand before enqueueing).
    var input: Input? { get set }
}

extension ResultConsuming {
    /// Makes this operation depend on `producer` and delivers the producer's `output` as this operation's
    /// `input` once the producer has finished, before this operation starts. The types are checked at
    /// compile time (`Producer.Output == Input`).
    ///
    /// The edge uses ``DependencyPolicy/requireSuccess``: if the producer is cancelled or fails, this
    /// operation is cancelled with ``InjectionError/dependencyDidNotSucceed(dependency:state:errors:)``
    /// carrying the producer's errors; if the producer finishes with a `nil` output, with
    /// ``InjectionError/missingResult(dependency:)``.
    /// - Throws: ``DependencyCycleError`` or ``OperationUsageError/alreadyStarted(operation:)``, as
    ///   ``AsyncOperation/addDependency(_:policy:)``.
    public func injectResult<Producer: ResultProducing>(from producer: Producer) throws where Producer.Output == Input {
        try addEdge(
            to: producer, policy: .requireSuccess,
            injection: Injection { dependent, dependency in
                guard let consumer = dependent as? Self, let producer = dependency as? Producer else { return }
                guard let value = producer.output else {
                    throw InjectionError.missingResult(dependency: producer.name)
                }
                consumer.input = value
            }
        )
    }
}

/// Gives every ``AsyncOperation`` the manual form of result injection, with the dependent typed as
/// itself. (A protocol is needed only because a class method cannot mention `Self` in a closure's
/// parameters.)
public protocol ManualInjecting: AnyObject {}

extension AsyncOperation: ManualInjecting {}

extension ManualInjecting where Self: AsyncOperation {
    /// Makes this operation depend on `dependency` and calls `body` once the dependency has finished and
    /// before this operation starts, with both operations and the dependency's errors: the manual form of
    /// injection, for several inputs or outputs, or for types that do not fit ``ResultProducing`` and
    /// ``ResultConsuming``.
    ///
    /// With ``DependencyPolicy/afterCompletion`` (the default) `body` is called whatever happened to the
    /// dependency (check `dependency.state` and the errors). With ``DependencyPolicy/requireSuccess`` it is
    /// called only on success and a failed dependency cancels this operation with an ``InjectionError``.
    /// If `body` throws, this operation is cancelled with
    /// ``InjectionError/injectionFailed(dependency:error:)``. `body` runs on the thread that finished the
    /// dependency; it must not block.
    /// - Throws: ``DependencyCycleError`` or ``OperationUsageError/alreadyStarted(operation:)``.
    public func injectResult<Dependency: AsyncOperation>(
        from dependency: Dependency,
        policy: DependencyPolicy = .afterCompletion,
        _ body: @escaping @Sendable (_ operation: Self, _ dependency: Dependency, _ errors: [any Error]) throws -> Void
    ) throws {
        try addEdge(
            to: dependency, policy: policy,
            injection: Injection { dependent, finished in
                guard let operation = dependent as? Self, let dependency = finished as? Dependency else { return }
                try body(operation, dependency, dependency.errors)
            }
        )
    }
}
