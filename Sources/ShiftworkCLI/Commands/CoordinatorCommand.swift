import ArgumentParser
import Cluster
import Foundation
import Messaging

/// `shiftwork coordinator`: the cluster's scheduler, serving clients and workers on one endpoint.
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Run a coordinator: accept batches from clients and hand tasks to workers.")

    @Option(help: "Endpoint to bind, e.g. tcp://0.0.0.0:5570 (env SHIFTWORK_LISTEN; default \(ClusterDefaults.listenEndpoint)).")
    var listen: String?

    @Option(help: "Seconds without a heartbeat before a worker is declared dead (env SHIFTWORK_WORKER_TIMEOUT; default 5).")
    var workerTimeout: Int?

    @Option(help: "Downloads from one origin host running at once across all workers (env SHIFTWORK_MAX_DOWNLOADS_PER_HOST; default \(ClusterDefaults.maxDownloadsPerHost)).")
    var maxDownloadsPerHost: Int?

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.coordinator", defaultLevel: .info)
        let endpoint = Environment.resolve(listen, "LISTEN", default: ClusterDefaults.listenEndpoint)
        let context = try MessagingContext()
        let coordinator = Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint],
                workerTimeout: .seconds(try Environment.resolve(workerTimeout, "WORKER_TIMEOUT", default: 5)),
                maxDownloadsPerHost: try Environment.resolve(
                    maxDownloadsPerHost, "MAX_DOWNLOADS_PER_HOST", default: ClusterDefaults.maxDownloadsPerHost)),
            context: context, logger: logger)
        let bound: String?
        do {
            bound = try await coordinator.start()
        } catch {
            throw CommandError("cannot listen on \(endpoint): \(error). Choose another endpoint with --listen.")
        }
        print("coordinator listening on \(bound ?? endpoint)")
        fflush(nil)
        let signal = await TerminationSignal.wait()
        logger.info("shutting down", metadata: ["signal": "\(signal)"])
        await coordinator.stop()
        await context.terminate()
    }
}
