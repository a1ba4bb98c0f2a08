import Fetching
import Foundation
import Imaging
import Logging
import Messaging

/// A coordinator and its workers in one process, over `inproc://`: the embedded default behind
/// `shiftwork run`. It runs the same `Coordinator`, `Worker` and `ClusterClient` code as a real cluster;
/// only the transport differs.
///
/// It exists within the scope of ``run(workerCount:slotsPerWorker:fetch:limits:logger:isolation:_:)``: the
/// workers run in a task group that the scope owns, beside its body, and are stopped and awaited when the
/// body ends, before the coordinator stops and the context ends.
public struct EmbeddedCluster: Sendable {
    /// The in-process endpoint the coordinator is bound to.
    public let endpoint: String
    /// The client connected to the embedded coordinator, for the scope's body.
    public let client: ClusterClient

    /// Starts a coordinator and `workerCount` workers, each with `slotsPerWorker` slots, runs `body` with
    /// the cluster, then stops the client, the workers and the coordinator and releases the context,
    /// whatever `body` did.
    ///
    /// Workers may read local paths and `file://` URLs: everything runs with the user's own rights.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; `ZeroMQError` or the coordinator's error when the cluster cannot start.
    public static func run<Value>(
        workerCount: Int = 1,
        slotsPerWorker: Int = ProcessInfo.processInfo.activeProcessorCount,
        fetch: FetchConfiguration = FetchConfiguration(allowLocalFiles: true),
        limits: ImageLimits = .default,
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (EmbeddedCluster) async throws -> Value
    ) async throws -> Value {
        let context = try MessagingContext()
        let endpoint = "inproc://shiftwork-\(UUID().uuidString.lowercased())"
        let coordinator: Coordinator
        do {
            coordinator = try Coordinator(
                configuration: CoordinatorConfiguration(listen: [endpoint]), context: context, logger: logger)
            try await coordinator.start()
        } catch {
            await context.terminate()
            throw error
        }
        let workers = (0..<max(1, workerCount)).map { index in
            Worker(
                configuration: WorkerConfiguration(
                    coordinator: endpoint, slots: slotsPerWorker, workerID: "embedded-worker-\(index + 1)",
                    fetch: fetch, limits: limits),
                context: context, logger: logger)
        }
        let outcome = await withDiscardingTaskGroup(returning: Result<Value, any Error>.self) { group in
            for worker in workers {
                // A worker that ends early (refused) leaves the others running.
                group.addTask { _ = try? await worker.run() }
            }
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(
                    try await ClusterClient.withConnection(endpoint: endpoint, context: context) { client in
                        try await body(EmbeddedCluster(endpoint: endpoint, client: client))
                    })
            } catch {
                outcome = .failure(error)
            }
            // The group then waits for each worker's `run()` to return.
            for worker in workers { await worker.stop() }
            return outcome
        }
        await coordinator.stop()
        await context.terminate()
        return try outcome.get()
    }
}
