import Cluster
import Logging
import ServiceLifecycle
import UnixSignals

/// Reads a coordinator's allow-lists again on each SIGHUP, without a restart (`Coordinator.reloadAllowLists`).
///
/// The signal is trapped from the reloader's creation on (before the coordinator says it listens), so
/// that a SIGHUP sent as soon as it does never takes SIGHUP's default action (ending the process).
struct AllowListReloader: Service {
    let coordinator: Coordinator
    let logger: Logger
    private let signals: UnixSignalsSequence

    /// Traps SIGHUP now; `run()` acts on it.
    init(coordinator: Coordinator, logger: Logger) async {
        self.coordinator = coordinator
        self.logger = logger
        self.signals = await UnixSignalsSequence(trapping: .sighup)
    }

    /// Reloads at each SIGHUP until the group shuts down. A list that cannot be read is logged and the
    /// lists in force stay.
    func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.info("SIGHUP: reading the allow-lists again")
            _ = try? await coordinator.reloadAllowLists()
        }
    }
}
