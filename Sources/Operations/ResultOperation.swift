import Runtime

/// An operation that produces an `Output` (``ResultProducing``): from a closure, or by overriding
/// ``produce()`` in a subclass.
///
/// ```swift
/// let download = ResultOperation<[UInt8]>(name: "download") { try await fetch(url) }
/// ```
// @unchecked: restated from AsyncOperation (Swift requires it); every stored property is a `let` of a Sendable type.
open class ResultOperation<Output: Sendable>: AsyncOperation, ResultProducing, @unchecked Sendable {
    private let body: (@Sendable () async throws -> Output)?
    private let storage = LockedValue<Output?>(nil)

    /// Creates a producer whose result is what `body` returns.
    public init(
        name: String? = nil, priority: OperationPriority = .normal,
        _ body: @escaping @Sendable () async throws -> Output
    ) {
        self.body = body
        super.init(name: name, priority: priority)
    }

    /// Creates a producer for subclasses that override ``produce()``.
    public override init(name: String? = nil, priority: OperationPriority = .normal) {
        self.body = nil
        super.init(name: name, priority: priority)
    }

    /// The result, set when `produce()` returns.
    public var output: Output? { storage.withLock { $0 } }

    /// Produces the result. The default calls the closure given at creation; subclasses override it.
    open func produce() async throws -> Output {
        guard let body else { throw MissingWorkError(operation: name) }
        return try await body()
    }

    /// Calls ``produce()`` and stores its result in ``output``.
    open override func execute() async throws {
        let value = try await produce()
        storage.withLock { $0 = value }
    }
}

/// An operation that turns an injected `Input` into an `Output` (``ResultConsuming`` and
/// ``ResultProducing``), to build transformation chains: `b.injectResult(from: a)`,
/// `c.injectResult(from: b)`.
// @unchecked: restated from AsyncOperation (Swift requires it); every stored property is a `let` of a Sendable type.
open class TransformOperation<Input: Sendable, Output: Sendable>: AsyncOperation, ResultConsuming, ResultProducing,
    @unchecked Sendable
{
    private let body: (@Sendable (Input) async throws -> Output)?
    private let storage = LockedValue<(input: Input?, output: Output?)>((nil, nil))

    /// Creates a transformation whose result is `body(input)`.
    public init(
        name: String? = nil, priority: OperationPriority = .normal,
        _ body: @escaping @Sendable (Input) async throws -> Output
    ) {
        self.body = body
        super.init(name: name, priority: priority)
    }

    /// Creates a transformation for subclasses that override ``transform(_:)``.
    public override init(name: String? = nil, priority: OperationPriority = .normal) {
        self.body = nil
        super.init(name: name, priority: priority)
    }

    /// The input, usually injected by ``ResultConsuming/injectResult(from:)``.
    public var input: Input? {
        get { storage.withLock { $0.input } }
        set { storage.withLock { $0.input = newValue } }
    }

    /// The result, set when `transform(_:)` returns.
    public var output: Output? { storage.withLock { $0.output } }

    /// Transforms the input. The default calls the closure given at creation; subclasses override it.
    open func transform(_ input: Input) async throws -> Output {
        guard let body else { throw MissingWorkError(operation: name) }
        return try await body(input)
    }

    /// Calls ``transform(_:)`` with the input and stores the result; fails with
    /// ``InjectionError/missingResult(dependency:)`` if no input was set.
    open override func execute() async throws {
        guard let input else { throw InjectionError.missingResult(dependency: "input of \(name)") }
        let value = try await transform(input)
        storage.withLock { $0.output = value }
    }
}

/// Thrown by ``ResultOperation`` or ``TransformOperation`` created without a closure whose subclass did
/// not override `produce()` / `transform(_:)`.
public struct MissingWorkError: Error, CustomStringConvertible, Sendable {
    /// The operation's name.
    public let operation: String
    /// Says what to do.
    public var description: String {
        "Operation '\(operation)' has no work: pass a closure to the initializer or override produce()/transform(_:)."
    }
}
