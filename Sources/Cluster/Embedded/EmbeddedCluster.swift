import Fetching
import Foundation
import Imaging
import Logging
import Messaging

/// A coordinator and its workers in one process, over `inproc://`: the embedded default behind
/// `shiftwork run`. It runs the same `Coordinator`, `Worker` and `ClusterClient` code as a real cluster;
/// only the transport differs.
public final class EmbeddedCluster: Sendable {
    /// The in-process endpoint the coordinator is bound to.
    public let endpoint: String
    /// The client connected to the embedded coordinator.
    public let client: ClusterClient
    private let context: MessagingContext
    private let coordinator: Coordinator
    private let workers: [Worker]
    /// One task group whose children are the workers' `run()`: started by `start`, ended by `shutdown`
    /// (which stops the workers and waits for the group). The cluster's lifetime has no enclosing call
    /// to own it, so this one task does.
    private let workersRunning: Task<Void, Never>

    /// Starts a coordinator and `workerCount` workers, each with `slotsPerWorker` slots.
    ///
    /// Workers may read local paths and `file://` URLs: everything runs with the user's own rights.
    public static func start(
        workerCount: Int = 1,
        slotsPerWorker: Int = ProcessInfo.processInfo.activeProcessorCount,
        fetch: FetchConfiguration = FetchConfiguration(allowLocalFiles: true),
        limits: ImageLimits = .default,
        logger: Logger
    ) async throws -> EmbeddedCluster {
        let context = try MessagingContext()
        let endpoint = "inproc://shiftwork-\(UUID().uuidString.lowercased())"
        let coordinator = try Coordinator(
            configuration: CoordinatorConfiguration(listen: [endpoint]), context: context, logger: logger)
        try await coordinator.start()
        var workers: [Worker] = []
        for index in 0..<max(1, workerCount) {
            let worker = Worker(
                configuration: WorkerConfiguration(
                    coordinator: endpoint, slots: slotsPerWorker, workerID: "embedded-worker-\(index + 1)",
                    fetch: fetch, limits: limits),
                context: context, logger: logger)
            workers.append(worker)
        }
        let running = workers
        let workersRunning = Task {
            await withDiscardingTaskGroup { group in
                for worker in running {
                    // A worker that ends early (refused) leaves the others running, as before.
                    group.addTask { _ = try? await worker.run() }
                }
            }
        }
        let client = try await ClusterClient(endpoint: endpoint, context: context)
        return EmbeddedCluster(
            endpoint: endpoint, client: client, context: context, coordinator: coordinator,
            workers: workers, workersRunning: workersRunning)
    }

    private init(
        endpoint: String, client: ClusterClient, context: MessagingContext, coordinator: Coordinator,
        workers: [Worker], workersRunning: Task<Void, Never>
    ) {
        self.endpoint = endpoint
        self.client = client
        self.context = context
        self.coordinator = coordinator
        self.workers = workers
        self.workersRunning = workersRunning
    }

    /// Stops the client, the workers and the coordinator, and releases the context.
    public func shutdown() async {
        await client.close()
        for worker in workers { await worker.stop() }
        await workersRunning.value
        await coordinator.stop()
        await context.terminate()
    }
}
