/// Observes the lifecycle events of an ``AsyncOperation``.
///
/// Every method has an empty default implementation, so implement only those you need.
/// Observers are called synchronously, without any engine lock held, on the thread that caused the
/// event: `operationWillExecute` on the task that is about to run `execute()`; `operationDidCancel` on
/// the caller of ``AsyncOperation/cancel(error:)``; `operationDidFinish` on the thread that finished
/// the operation (its task, or the canceller for an operation that never started), before its
/// dependents are released; `operation(_:didAddChild:)` on the caller of
/// ``GroupOperation/addChild(_:)``, and for the children given to a group at creation on the group's task
/// when it starts executing. Keep them short and non-blocking.
public protocol OperationObserver: Sendable {
    /// The operation's conditions are satisfied and `execute()` is about to start.
    func operationWillExecute(_ operation: AsyncOperation)
    /// The operation was cancelled (called once, for the first cancellation); `errors` holds the error
    /// passed to `cancel(error:)`, if any.
    func operationDidCancel(_ operation: AsyncOperation, errors: [any Error])
    /// The operation reached a terminal state (called exactly once).
    func operationDidFinish(_ operation: AsyncOperation, state: OperationState, errors: [any Error])
    /// A child was added to the group `operation` (children given at creation: when the group executes).
    func operation(_ operation: AsyncOperation, didAddChild child: AsyncOperation)
}

extension OperationObserver {
    /// Does nothing.
    public func operationWillExecute(_ operation: AsyncOperation) {}
    /// Does nothing.
    public func operationDidCancel(_ operation: AsyncOperation, errors: [any Error]) {}
    /// Does nothing.
    public func operationDidFinish(_ operation: AsyncOperation, state: OperationState, errors: [any Error]) {}
    /// Does nothing.
    public func operation(_ operation: AsyncOperation, didAddChild child: AsyncOperation) {}
}

/// An ``OperationObserver`` made of closures; any of them may be `nil`.
///
/// ```swift
/// task.addObserver(BlockObserver(didCancel: { [weak group] _, _ in group?.cancel() }))
/// ```
public struct BlockObserver: OperationObserver {
    private let willExecute: (@Sendable (AsyncOperation) -> Void)?
    private let didCancel: (@Sendable (AsyncOperation, [any Error]) -> Void)?
    private let didFinish: (@Sendable (AsyncOperation, OperationState, [any Error]) -> Void)?
    private let didAddChild: (@Sendable (AsyncOperation, AsyncOperation) -> Void)?

    /// Creates an observer from closures, called as described in ``OperationObserver``.
    public init(
        willExecute: (@Sendable (AsyncOperation) -> Void)? = nil,
        didCancel: (@Sendable (AsyncOperation, [any Error]) -> Void)? = nil,
        didFinish: (@Sendable (AsyncOperation, OperationState, [any Error]) -> Void)? = nil,
        didAddChild: (@Sendable (AsyncOperation, AsyncOperation) -> Void)? = nil
    ) {
        self.willExecute = willExecute
        self.didCancel = didCancel
        self.didFinish = didFinish
        self.didAddChild = didAddChild
    }

    /// Calls `willExecute`.
    public func operationWillExecute(_ operation: AsyncOperation) { willExecute?(operation) }
    /// Calls `didCancel`.
    public func operationDidCancel(_ operation: AsyncOperation, errors: [any Error]) { didCancel?(operation, errors) }
    /// Calls `didFinish`.
    public func operationDidFinish(_ operation: AsyncOperation, state: OperationState, errors: [any Error]) {
        didFinish?(operation, state, errors)
    }
    /// Calls `didAddChild`.
    public func operation(_ operation: AsyncOperation, didAddChild child: AsyncOperation) {
        didAddChild?(operation, child)
    }
}
