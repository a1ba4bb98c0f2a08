/// An operation whose work is a closure.
///
/// ```swift
/// let save = AsyncBlockOperation(name: "save") { try await store.save() }
/// ```
// @unchecked: restated from AsyncOperation (Swift requires it); every stored property is a `let` of a Sendable type.
public final class AsyncBlockOperation: AsyncOperation, @unchecked Sendable {
    private let block: @Sendable () async throws -> Void

    /// Creates an operation that runs `block` when it executes; throwing fails the operation.
    public init(
        name: String? = nil, priority: OperationPriority = .normal, _ block: @escaping @Sendable () async throws -> Void
    ) {
        self.block = block
        super.init(name: name, priority: priority)
    }

    /// Runs the block.
    public override func execute() async throws {
        try await block()
    }
}
