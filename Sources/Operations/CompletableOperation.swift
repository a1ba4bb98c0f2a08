import Runtime

/// An operation completed by an external event: `execute()` runs `onStart` (for example, send a task to a
/// worker over the network) and then suspends, without blocking a thread, until ``complete(with:)`` or
/// ``fail(with:)`` is called from anywhere (for example, when the result message arrives). A "remote
/// operation".
///
/// The first of `complete`, `fail` and cancellation wins; later calls return `false`. Completing before
/// the operation has started is allowed: it then finishes as soon as it executes (after `onStart`).
/// Cancelling the operation resumes the suspended `execute()` at once (and `onCancel`, if given, runs, for
/// example to send a cancel message to the worker).
///
/// ```swift
/// let remote = CompletableOperation<[UInt8]>(name: "download on worker") { operation in
///     try await connection.send(task, id: operation.id)
/// }
/// // later, when the reply arrives:
/// remote.complete(with: bytes)
/// ```
// @unchecked: restated from AsyncOperation (Swift requires it); every stored property is a `let` of a Sendable type.
public final class CompletableOperation<Output: Sendable>: AsyncOperation, ResultProducing, @unchecked Sendable {
    private let onStart: @Sendable (CompletableOperation<Output>) async throws -> Void
    private let onCancel: (@Sendable (CompletableOperation<Output>) -> Void)?
    private let storage = LockedValue<CompletionCore<Output>>(CompletionCore())

    /// Creates the operation.
    /// - Parameters:
    ///   - onStart: runs when the operation executes, before it waits for completion; throwing fails it.
    ///     (A trailing closure is `onStart`.)
    ///   - onCancel: runs once if the operation is cancelled while it waits.
    public init(
        name: String? = nil, priority: OperationPriority = .normal,
        onStart: @escaping @Sendable (CompletableOperation<Output>) async throws -> Void = { _ in },
        onCancel: (@Sendable (CompletableOperation<Output>) -> Void)? = nil
    ) {
        self.onStart = onStart
        self.onCancel = onCancel
        super.init(name: name, priority: priority)
    }

    /// The value given to ``complete(with:)``, once the operation has it.
    public var output: Output? {
        storage.withLock { core in
            if case .success(let value)? = core.result { return value }
            return nil
        }
    }

    /// Completes the operation successfully with `value`.
    /// - Returns: `false` if it was already completed or failed (the first call wins).
    @discardableResult
    public func complete(with value: Output) -> Bool { resolve(.success(value)) }

    /// Fails the operation with `error`.
    /// - Returns: `false` if it was already completed or failed (the first call wins).
    @discardableResult
    public func fail(with error: any Error) -> Bool { resolve(.failure(error)) }

    private func resolve(_ result: Result<Output, any Error>) -> Bool {
        let (accepted, continuation) = storage.withLock { core -> (Bool, CheckedContinuation<Void, any Error>?) in
            guard core.result == nil else { return (false, nil) }
            core.result = result
            let continuation = core.continuation
            core.continuation = nil
            return (true, continuation)
        }
        guard let continuation else { return accepted }
        switch result {
        case .success: continuation.resume()
        case .failure(let error): continuation.resume(throwing: error)
        }
        return accepted
    }

    /// Runs `onStart`, then suspends until completed, failed or cancelled.
    public override func execute() async throws {
        try await onStart(self)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = storage.withLock { core -> Result<Output, any Error>?? in
                    if let result = core.result { return .some(result) }
                    if Task.isCancelled { return .some(nil) }
                    core.continuation = continuation
                    return nil
                }
                switch ready {
                case .none: break
                case .some(.none): continuation.resume(throwing: CancellationError())
                case .some(.some(.success)): continuation.resume()
                case .some(.some(.failure(let error))): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let continuation = storage.withLock { core -> CheckedContinuation<Void, any Error>? in
                let continuation = core.continuation
                core.continuation = nil
                return continuation
            }
            if let continuation {
                onCancel?(self)
                continuation.resume(throwing: CancellationError())
            }
        }
    }
}

/// The mutable state of a ``CompletableOperation``, guarded by its lock.
struct CompletionCore<Output: Sendable> {
    var result: Result<Output, any Error>?
    var continuation: CheckedContinuation<Void, any Error>?
}
