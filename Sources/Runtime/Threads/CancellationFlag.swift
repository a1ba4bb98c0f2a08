import Synchronization

/// A flag that says "stop": raised once, read from any thread, never lowered.
///
/// Swift's `Task.isCancelled` only answers inside the task. Work that runs on a thread of its own
/// (``ComputeThreads``), or in C code called from there, reads this flag instead: ``ComputeThreads/run(_:)``
/// raises it when the awaiting task is cancelled.
public final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// A flag that is not raised.
    public init() {}

    /// Whether ``raise()`` has been called.
    public var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// Raises the flag; later reads on every thread see it. Idempotent.
    public func raise() { raised.store(true, ordering: .releasing) }
}
