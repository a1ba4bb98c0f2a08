/// A worker's state as its health endpoint reports it (`shiftwork worker --health-listen`).
public struct WorkerHealth: Sendable, Equatable {
    /// The coordinator has welcomed this worker and has not since said it no longer knows it.
    public var registered: Bool
    /// The worker takes no new tasks: it finishes those it runs, then leaves (SIGTERM).
    public var draining: Bool
    /// The worker has left, or is leaving now.
    public var stopping: Bool
    /// Tasks running now.
    public var running: Int

    /// Creates a report.
    public init(registered: Bool, draining: Bool, stopping: Bool, running: Int) {
        self.registered = registered
        self.draining = draining
        self.stopping = stopping
        self.running = running
    }

    /// Ready for tasks: registered, neither draining nor stopping.
    public var isReady: Bool { registered && !draining && !stopping }

    /// One line for the endpoint's answer, e.g. `ready: registered, 3 running`.
    public var summary: String {
        let state =
            stopping
            ? "stopping" : draining ? "draining" : registered ? "registered" : "not registered with a coordinator"
        return "\(isReady ? "ready" : "not ready"): \(state), \(running) running"
    }
}
