/// Decides, exactly once, between starting a piece of work and giving it up before it starts: the work
/// calls ``start()`` as it begins (on its thread), whoever wants it back calls ``giveUp()``; the first call
/// wins. A worker gives a task back to the coordinator (work stealing at a batch's tail) only when
/// ``giveUp()`` wins: then the work never runs, so the task runs exactly once, wherever it goes next.
public final class StartGate: Sendable {
    private enum State { case pending, started, givenUp }
    private let state = LockedValue(State.pending)

    /// A gate that neither started nor was given up.
    public init() {}

    /// Called by the work as it begins: `true` when it may run (it was not given up); from now on
    /// ``giveUp()`` fails.
    public func start() -> Bool {
        state.withLock { state in
            if state == .pending { state = .started }
            return state == .started
        }
    }

    /// Gives the work up: `true` when it had not started (it never will); `false` when it has.
    public func giveUp() -> Bool {
        state.withLock { state in
            guard state == .pending else { return false }
            state = .givenUp
            return true
        }
    }
}
