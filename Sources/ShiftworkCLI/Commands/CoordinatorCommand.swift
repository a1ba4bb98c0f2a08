import ArgumentParser
import Cluster
import Foundation
import HTTPEndpoints
import Messaging
import ServiceLifecycle

/// `shiftwork coordinator`: the cluster's scheduler, serving clients and workers on one endpoint.
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Run a coordinator: accept batches from clients and hand tasks to workers.")

    @Option(
        help:
            "Endpoint to bind, e.g. tcp://0.0.0.0:5570 (IPv4), tcp://[::1]:5570 (IPv6) or tcp://*:5570 (every address, IPv4 and IPv6) (env SHIFTWORK_LISTEN; default \(ClusterDefaults.listenEndpoint))."
    )
    var listen: String?

    @Option(
        help: "Seconds without a heartbeat before a worker is declared dead (env SHIFTWORK_WORKER_TIMEOUT; default 5).")
    var workerTimeout: Int?

    @Option(
        help:
            "Seconds one attempt of a task may run on its worker before it is cancelled there and retried or failed as timed out (env SHIFTWORK_TASK_TIMEOUT; default \(CoordinatorConfiguration.defaultTaskTimeout.components.seconds): above a worker's download time limit, far above the tilt-shift of the largest image it accepts)."
    )
    var taskTimeout: Int?

    @Option(
        help:
            "Downloads from one origin host running at once across all workers (env SHIFTWORK_MAX_DOWNLOADS_PER_HOST; default \(ClusterDefaults.maxDownloadsPerHost))."
    )
    var maxDownloadsPerHost: Int?

    @Option(
        name: [.customLong("metrics-listen"), .customLong("http-listen")],
        help:
            "Serve HTTP at HOST:PORT (`*:PORT`: every interface, IPv4 and IPv6; PORT alone: 127.0.0.1): Prometheus metrics at /metrics and the live dashboard at / (env SHIFTWORK_METRICS_LISTEN or SHIFTWORK_HTTP_LISTEN; default: off; port 0 picks a free one). Beyond loopback, the dashboard needs --dashboard-token-file."
    )
    var metricsListen: String?

    @Option(
        help: ArgumentHelp(
            "A file holding the dashboard's token (16+ characters, e.g. `openssl rand -hex 32 > FILE`): the dashboard then answers only requests that carry it (env SHIFTWORK_DASHBOARD_TOKEN_FILE). Needed to serve the dashboard beyond loopback; /metrics stays open.",
            valueName: "file"))
    var dashboardTokenFile: String?

    @Option(
        help:
            "Directory for the journal and the finished results, so that a restarted coordinator carries on with every accepted batch and `shiftwork results` can fetch them (env SHIFTWORK_DATA_DIR; default: none, everything in memory)."
    )
    var dataDir: String?

    @Option(
        help:
            "Batches with more items are refused (env SHIFTWORK_MAX_BATCH_ITEMS; default \(ClusterDefaults.maxBatchItems))."
    )
    var maxBatchItems: Int?

    @Option(
        help:
            "A client with this many unfinished items has further batches refused (env SHIFTWORK_MAX_PENDING_ITEMS_PER_CLIENT; default \(ClusterDefaults.maxPendingItemsPerClient))."
    )
    var maxPendingItemsPerClient: Int?

    @Option(
        help:
            "A client (its CurveZMQ key; its connection with --insecure) with this many unfinished items has further batches refused (env SHIFTWORK_MAX_QUEUED_ITEMS_PER_CLIENT; default \(ClusterDefaults.maxQueuedItemsPerClient))."
    )
    var maxQueuedItemsPerClient: Int?

    @Option(
        help:
            "The most batches kept for one client, running or finished and kept for status; further batches are refused (env SHIFTWORK_MAX_BATCHES_PER_CLIENT; default \(ClusterDefaults.maxBatchesPerClient))."
    )
    var maxBatchesPerClient: Int?

    /// `--max-batch-items`: 1 up to the protocol's ceiling (a client sizes its tables by a batch's count only
    /// up to it, `MessageBounds.maxItemsPerBatch`).
    func batchItemLimit() throws -> Int {
        let items = try Environment.resolve(maxBatchItems, "MAX_BATCH_ITEMS", default: ClusterDefaults.maxBatchItems)
        guard (1...MessageBounds.maxItemsPerBatch).contains(items) else {
            throw CommandError(
                "--max-batch-items must be 1 to \(MessageBounds.maxItemsPerBatch) (got \(items)): clients take "
                    + "no batch larger than that")
        }
        return items
    }

    /// The per-client limits, from `--max-queued-items-per-client` and `--max-batches-per-client`.
    func clientLimits() throws -> (queuedItems: Int, batches: Int) {
        let items = try Environment.resolve(
            maxQueuedItemsPerClient, "MAX_QUEUED_ITEMS_PER_CLIENT", default: ClusterDefaults.maxQueuedItemsPerClient)
        let batches = try Environment.resolve(
            maxBatchesPerClient, "MAX_BATCHES_PER_CLIENT", default: ClusterDefaults.maxBatchesPerClient)
        guard items >= 1, batches >= 1 else {
            throw CommandError(
                "--max-queued-items-per-client and --max-batches-per-client must be at least 1 (got \(items) and \(batches))"
            )
        }
        return (items, batches)
    }

    @Option(
        help:
            "How many finished batches are kept for `status` and `results`; the oldest is retired first (env SHIFTWORK_KEEP_FINISHED_BATCHES; default \(ClusterDefaults.keepFinishedBatches))."
    )
    var keepFinishedBatches: Int?

    @Option(
        help:
            "Seconds a finished batch is kept for `status` and `results` before it is retired (env SHIFTWORK_KEEP_FINISHED_FOR; default \(ClusterDefaults.keepFinishedFor.components.seconds))."
    )
    var keepFinishedFor: Int?

    @Option(
        help:
            "How waiting tasks take turns for worker slots: fair (clients and batches take turns, weighted by priority) or fifo (every batch waits for those before it) (env SHIFTWORK_SCHEDULING; default fair)."
    )
    var scheduling: String?

    /// The scheduling policy `--scheduling` names.
    func schedulingPolicy() throws -> SchedulingPolicy {
        let text = Environment.resolve(scheduling, "SCHEDULING", default: SchedulingPolicy.fairShare.rawValue)
        guard let policy = SchedulingPolicy(rawValue: text.lowercased()) else {
            throw CommandError(
                "--scheduling \(text) is not a scheduling policy: give "
                    + SchedulingPolicy.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return policy
    }

    /// The retention of finished batches, from `--keep-finished-batches` and `--keep-finished-for`.
    func retention() throws -> BatchRetention {
        let count = try Environment.resolve(
            keepFinishedBatches, "KEEP_FINISHED_BATCHES", default: ClusterDefaults.keepFinishedBatches)
        let seconds = try Environment.resolve(
            keepFinishedFor, "KEEP_FINISHED_FOR",
            default: Int(ClusterDefaults.keepFinishedFor.components.seconds))
        guard count >= 0, seconds >= 0 else {
            throw CommandError(
                "--keep-finished-batches and --keep-finished-for must not be negative (got \(count) and \(seconds)); "
                    + "0 retires a batch as soon as it finished")
        }
        return BatchRetention(maxFinishedBatches: count, maxFinishedAge: .seconds(seconds))
    }

    @Option(
        help:
            "The largest message accepted from a peer, in MiB; larger ones are dropped and the peer disconnected (env SHIFTWORK_MAX_MESSAGE_MB; default \(SocketOptions().maxMessageSize >> 20))."
    )
    var maxMessageMb: Int?

    @Option(
        help: ArgumentHelp(
            "The coordinator's secret key, as `shiftwork keygen coordinator` writes it into coordinator.key (env SHIFTWORK_SECRET_KEY). Turns CurveZMQ on, with --allow-keys or the role lists below (SIGHUP reads them again).",
            valueName: "file"))
    var secretKey: String?

    @OptionGroup var allowLists: AllowListOptions

    @OptionGroup(title: "A pair of coordinators (docs/failover.md)") var pair: PairOptions

    @Flag(
        help:
            "Listen on tcp:// without CurveZMQ: no authentication, no encryption. Only on a network you trust (env SHIFTWORK_INSECURE=1)."
    )
    var insecure = false

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if let metricsListen { _ = try Self.hostAndPort(metricsListen) }
    }

    /// A coordinator allocates and frees per-task objects at a high rate on several threads. glibc grows
    /// a thread's heap by the bytes it lacks (one `mprotect` per growth) and trims it again as soon as
    /// its top is free: about one `mprotect` per task under load. Growing by 64 MiB at a time and
    /// trimming only above 256 MiB free removes that churn; untouched pages cost no memory.
    /// (`GLIBC_TUNABLES=glibc.malloc.top_pad=…:glibc.malloc.trim_threshold=…` overrides it.)
    static func tuneAllocator() {
        #if canImport(Glibc)
        if ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.") == true { return }
        // mallopt is not in Swift's Glibc module; glibc's <malloc.h>: M_TRIM_THRESHOLD = -1, M_TOP_PAD = -2.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(-2, 64 << 20)
        _ = mallopt(-1, 256 << 20)
        #endif
    }

    /// Splits `HOST:PORT` (or `[IPv6]:PORT`, or `*:PORT` for every interface); a port alone means loopback (`127.0.0.1`).
    static func hostAndPort(_ text: String, option: String = "--metrics-listen (--http-listen)") throws -> (String, Int)
    {
        if let port = Int(text), (0...65535).contains(port) { return ("127.0.0.1", port) }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port), colon != text.startIndex
        else {
            throw ValidationError("\(option) wants HOST:PORT or PORT, e.g. 127.0.0.1:9464 (got '\(text)')")
        }
        let host = text[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (host, port)
    }

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.coordinator", defaultLevel: .info)
        Self.tuneAllocator()
        let endpoint = Environment.resolve(listen, "LISTEN", default: ClusterDefaults.listenEndpoint)
        var socketOptions = SocketOptions()
        let maxMessage = try Environment.resolve(
            maxMessageMb, "MAX_MESSAGE_MB", default: Int(socketOptions.maxMessageSize >> 20))
        guard maxMessage > 0 else { throw CommandError("--max-message-mb must be at least 1 (got \(maxMessage))") }
        socketOptions.maxMessageSize = Int64(maxMessage) << 20
        let dataDirectory = (dataDir ?? Environment.value("DATA_DIR")).map {
            URL(fileURLWithPath: $0, isDirectory: true)
        }
        let authentication = try allowLists.authentication(
            endpoint: endpoint, secretKey: Environment.resolve(secretKey, "SECRET_KEY"),
            insecure: Environment.flag(insecure, "INSECURE"))
        let coordinator = try Coordinator(
            configuration: CoordinatorConfiguration(
                listen: [endpoint],
                workerTimeout: .seconds(try Environment.resolve(workerTimeout, "WORKER_TIMEOUT", default: 5)),
                socketOptions: socketOptions,
                maxDownloadsPerHost: try Environment.resolve(
                    maxDownloadsPerHost, "MAX_DOWNLOADS_PER_HOST", default: ClusterDefaults.maxDownloadsPerHost),
                dataDirectory: dataDirectory,
                maxBatchItems: try batchItemLimit(),
                maxPendingItemsPerClient: try Environment.resolve(
                    maxPendingItemsPerClient, "MAX_PENDING_ITEMS_PER_CLIENT",
                    default: ClusterDefaults.maxPendingItemsPerClient),
                authentication: authentication, retention: try retention()
            ).withTaskTimeout(.seconds(try Self.resolveTaskTimeout(taskTimeout))).scheduled(try schedulingPolicy())
                .limitingClients(queuedItems: try clientLimits().queuedItems, batches: try clientLimits().batches)
                .paired(try pair.configuration(hasDataDirectory: dataDirectory != nil)),
            logger: logger)
        let bound: String?
        do {
            bound = try await coordinator.start()
        } catch let error as ZeroMQError {
            await coordinator.stop()
            throw CommandError("cannot listen on \(endpoint): \(error). Choose another endpoint with --listen.")
        } catch {
            await coordinator.stop()
            throw CommandError("\(error)")
        }
        // Trapped before the coordinator says it listens: a SIGHUP from then on reloads, never ends it.
        let reloader = authentication == nil ? nil : await AllowListReloader(coordinator: coordinator, logger: logger)
        if let dataDirectory { print("journal and results in \(dataDirectory.path)") }
        print("coordinator listening on \(bound ?? endpoint)")
        if let authentication {
            let count = authentication.allowedKeys.count
            print(
                "CurveZMQ on: public key \(authentication.keyPair.publicKey), \(count) peer key\(count == 1 ? "" : "s") allowed"
                    + " (\(authentication.roles.summary); SIGHUP reloads the lists)")
        } else if !endpoint.hasPrefix("inproc://") {
            logger.warning(
                "CurveZMQ is off (--insecure): peers are neither authenticated nor encrypted",
                metadata: ["endpoint": "\(endpoint)"])
        }
        // The group shuts its services down in the reverse of this order: the coordinator first, then the
        // metrics server, which answers scrapes until the coordinator has stopped.
        var services: [any Service] = []
        let tokenPath = Environment.resolve(dashboardTokenFile, "DASHBOARD_TOKEN_FILE")
        if let address = metricsListen ?? Environment.value("METRICS_LISTEN") ?? Environment.value("HTTP_LISTEN") {
            let (host, port) = try Self.hostAndPort(address)
            do {
                let tokenFile = try tokenPath.map { try DashboardTokenFile(path: $0) }
                let dashboard = Dashboard(
                    source: coordinator, boundHost: host, tokenFile: tokenFile, keepsOutputs: dataDirectory != nil)
                let server = try await MetricsServer.start(host: host, port: port, dashboard: dashboard) {
                    await coordinator.metrics()
                }
                services.append(server)
                let base = "http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)"
                print("metrics on \(base)/metrics")
                switch dashboard.access {
                case .loopback: print("dashboard on \(base)/")
                case .token: print("dashboard on \(base)/ (for requests with the token in \(tokenPath ?? "-"))")
                case .off:
                    print("dashboard off: \(host) is beyond loopback; give --dashboard-token-file to serve it there")
                }
            } catch let problem as DashboardTokenFile.Problem {
                await coordinator.stop()
                throw CommandError(problem.description)
            } catch {
                await coordinator.stop()
                throw CommandError(
                    "cannot serve metrics on \(address): \(error)."
                        + ((error as? HTTPEndpointError)?.isAboutTheAddress == false
                            ? "" : " Choose another address with --metrics-listen."))
            }
        } else if tokenPath != nil {
            logger.warning(
                "--dashboard-token-file has no effect without --http-listen (--metrics-listen): no dashboard is served")
        }
        if let reloader { services.append(reloader) }
        services.append(coordinator)
        fflush(nil)
        try await ServiceRunner.run(services, maximumGracefulShutdownDuration: Self.shutdownDeadline, logger: logger)
    }

    /// How long a graceful shutdown may take before it is cut short: the coordinator only flushes its
    /// journal and closes its sockets.
    static let shutdownDeadline: Duration = .seconds(10)
}
