import Foundation
import Logging
import Messaging

@testable import Cluster

/// A real coordinator in this process, bound to an `inproc://` endpoint of its own context: for tests that
/// read its state on its actor while real clients and workers (over the same context) talk to it.
struct InprocCoordinator {
    let context: MessagingContext
    let endpoint: String
    let coordinator: Coordinator

    /// Starts a coordinator that accepts batches of up to `maxBatchItems` and keeps finished ones as
    /// `retention` says; it logs only critical messages.
    static func start(
        _ label: String, maxBatchItems: Int, retention: BatchRetention = BatchRetention()
    ) async throws -> InprocCoordinator {
        let context = try MessagingContext()
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let endpoint = "inproc://\(label)-\(UUID().uuidString)"
        let coordinator = try Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint], maxBatchItems: maxBatchItems, retention: retention),
            context: context, logger: logger)
        try await coordinator.start()
        return InprocCoordinator(context: context, endpoint: endpoint, coordinator: coordinator)
    }

    /// Stops the coordinator and releases the context (after the clients and workers using it stopped).
    func stop() async {
        await coordinator.stop()
        await context.terminate()
    }
}
