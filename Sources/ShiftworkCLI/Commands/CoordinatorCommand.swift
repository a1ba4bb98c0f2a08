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

    @Option(help: "Serve Prometheus metrics at http://HOST:PORT/metrics, e.g. 127.0.0.1:9464 (env SHIFTWORK_METRICS_LISTEN; default: off; port 0 picks a free one).")
    var metricsListen: String?

    @Option(help: "Directory for the journal and the finished results, so that a restarted coordinator carries on with every accepted batch and `shiftwork results` can fetch them (env SHIFTWORK_DATA_DIR; default: none, everything in memory).")
    var dataDir: String?

    @Option(help: "Batches with more items are refused (env SHIFTWORK_MAX_BATCH_ITEMS; default \(ClusterDefaults.maxBatchItems)).")
    var maxBatchItems: Int?

    @Option(help: "A client with this many unfinished items has further batches refused (env SHIFTWORK_MAX_PENDING_ITEMS_PER_CLIENT; default \(ClusterDefaults.maxPendingItemsPerClient)).")
    var maxPendingItemsPerClient: Int?

    @Option(help: "The largest message accepted from a peer, in MiB; larger ones are dropped and the peer disconnected (env SHIFTWORK_MAX_MESSAGE_MB; default \(SocketOptions().maxMessageSize >> 20)).")
    var maxMessageMb: Int?

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if let metricsListen { _ = try Self.hostAndPort(metricsListen) }
    }

    /// Splits `HOST:PORT` (or `[IPv6]:PORT`).
    static func hostAndPort(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port), colon != text.startIndex
        else {
            throw ValidationError("--metrics-listen wants HOST:PORT, e.g. 127.0.0.1:9464 (got '\(text)')")
        }
        let host = text[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (host, port)
    }

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.coordinator", defaultLevel: .info)
        let endpoint = Environment.resolve(listen, "LISTEN", default: ClusterDefaults.listenEndpoint)
        var socketOptions = SocketOptions()
        let maxMessage = try Environment.resolve(maxMessageMb, "MAX_MESSAGE_MB", default: Int(socketOptions.maxMessageSize >> 20))
        guard maxMessage > 0 else { throw CommandError("--max-message-mb must be at least 1 (got \(maxMessage))") }
        socketOptions.maxMessageSize = Int64(maxMessage) << 20
        let dataDirectory = (dataDir ?? Environment.value("DATA_DIR")).map { URL(fileURLWithPath: $0, isDirectory: true) }
        let context = try MessagingContext()
        let coordinator = Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint],
                workerTimeout: .seconds(try Environment.resolve(workerTimeout, "WORKER_TIMEOUT", default: 5)),
                socketOptions: socketOptions,
                maxDownloadsPerHost: try Environment.resolve(
                    maxDownloadsPerHost, "MAX_DOWNLOADS_PER_HOST", default: ClusterDefaults.maxDownloadsPerHost),
                dataDirectory: dataDirectory,
                maxBatchItems: try Environment.resolve(maxBatchItems, "MAX_BATCH_ITEMS", default: ClusterDefaults.maxBatchItems),
                maxPendingItemsPerClient: try Environment.resolve(
                    maxPendingItemsPerClient, "MAX_PENDING_ITEMS_PER_CLIENT", default: ClusterDefaults.maxPendingItemsPerClient)),
            context: context, logger: logger)
        let bound: String?
        do {
            bound = try await coordinator.start()
        } catch let error as ZeroMQError {
            await context.terminate()
            throw CommandError("cannot listen on \(endpoint): \(error). Choose another endpoint with --listen.")
        } catch {
            await context.terminate()
            throw CommandError("\(error)")
        }
        if let dataDirectory { print("journal and results in \(dataDirectory.path)") }
        print("coordinator listening on \(bound ?? endpoint)")
        var metricsServer: MetricsServer?
        if let address = metricsListen ?? Environment.value("METRICS_LISTEN") {
            let (host, port) = try Self.hostAndPort(address)
            do {
                let server = try await MetricsServer.start(host: host, port: port) { await coordinator.metrics() }
                metricsServer = server
                print("metrics on http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)/metrics")
            } catch {
                await coordinator.stop()
                await context.terminate()
                throw CommandError("cannot serve metrics on \(address): \(error). Choose another address with --metrics-listen.")
            }
        }
        fflush(nil)
        let signal = await TerminationSignal.wait()
        logger.info("shutting down", metadata: ["signal": "\(signal)"])
        await metricsServer?.shutdown()
        await coordinator.stop()
        await context.terminate()
    }
}
