import Foundation

/// Raised once when a server stops: what a handler or body blocked on a connection's thread waits on,
/// so that a stop never waits for a sleeping stream.
public final class StopSignal: @unchecked Sendable {
    // @unchecked: `raised` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var raised = false

    /// A signal not yet raised.
    public init() {}

    /// Whether the signal was raised.
    public var isRaised: Bool {
        condition.lock()
        defer { condition.unlock() }
        return raised
    }

    /// Raises the signal and wakes everything waiting on it.
    public func raise() {
        condition.lock()
        raised = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread (never a task of the cooperative pool) for `seconds`, or until the signal is
    /// raised, or forever with `nil`; returns `true` when the time passed, `false` when the signal was raised.
    @discardableResult
    public func wait(seconds: Double?) -> Bool {
        let deadline = seconds.map { Date(timeIntervalSinceNow: $0) }
        condition.lock()
        defer { condition.unlock() }
        while !raised {
            if let deadline {
                if !condition.wait(until: deadline) { return !raised }
            } else {
                condition.wait()
            }
        }
        return false
    }
}
