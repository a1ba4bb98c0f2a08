import Logging
import ServiceLifecycle
import UnixSignals

/// Runs a long-lived command's services (coordinator, worker, metrics server) in a `ServiceGroup` until
/// SIGTERM or SIGINT.
///
/// The first signal shuts the group down gracefully: the services in the reverse of their order, each
/// after the one after it has finished. A second signal, or `maximumGracefulShutdownDuration` spent, cancels
/// them instead (a worker then abandons its running tasks, which the coordinator queues again).
enum ServiceRunner {
    /// The signals that stop a long-lived command: SIGTERM (`docker stop`, compose scale-down) and SIGINT
    /// (Ctrl-C).
    static let shutdownSignals: [UnixSignal] = [.sigterm, .sigint]

    /// Runs `services` until they end or a shutdown signal ends them.
    ///
    /// - Throws: the first error a service throws.
    static func run(_ services: [any Service], maximumGracefulShutdownDuration: Duration, logger: Logger) async throws {
        var configuration = ServiceGroupConfiguration(
            // A service that ends by itself (a worker the coordinator refused) ends the others gracefully; one
            // that throws cancels them, and its error ends the command.
            services: services.map {
                ServiceGroupConfiguration.ServiceConfiguration(
                    service: $0, successTerminationBehavior: .gracefullyShutdownGroup)
            },
            gracefulShutdownSignals: shutdownSignals, logger: logger)
        configuration.maximumGracefulShutdownDuration = maximumGracefulShutdownDuration
        let group = ServiceGroup(configuration: configuration)
        // The services and the watcher of a second signal run side by side in one task group: the first to end
        // (the services done, failed or cancelled; or a second signal) has the other cancelled, and both are
        // awaited before the command returns.
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            tasks.addTask {
                await awaitSecondSignal(
                    maximumGracefulShutdownDuration: maximumGracefulShutdownDuration, logger: logger)
            }
            try await tasks.next()
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
    }

    /// Returns on the second shutdown signal (the group acts on the first, which this logs), or when cancelled.
    private static func awaitSecondSignal(maximumGracefulShutdownDuration: Duration, logger: Logger) async {
        var received = 0
        for await signal in await UnixSignalsSequence(trapping: shutdownSignals) {
            received += 1
            if received == 1 {
                logger.info(
                    "shutting down gracefully (a second signal stops at once)",
                    metadata: [
                        "signal": "\(signal)", "deadline": "\(maximumGracefulShutdownDuration)",
                    ])
            } else {
                logger.warning("second signal: stopping at once", metadata: ["signal": "\(signal)"])
                return
            }
        }
    }
}
