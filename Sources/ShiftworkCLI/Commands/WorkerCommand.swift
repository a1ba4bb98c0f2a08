import ArgumentParser
import Cluster
import Fetching
import Foundation
import HTTPEndpoints
import Imaging
import ServiceLifecycle

/// `shiftwork worker`: runs download and tilt-shift tasks for a coordinator.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a worker: connect to a coordinator and process the tasks it sends.")

    @OptionGroup var coordinator: CoordinatorEndpointOption

    @Option(
        help:
            "Tasks run at once (env SHIFTWORK_SLOTS; default: twice --compute-threads, so that downloads and sink writes overlap with the images being filtered)."
    )
    var slots: Int?

    @Option(
        help:
            "Images filtered at once: threads for decoding, filtering and encoding, at most --slots (env SHIFTWORK_COMPUTE_THREADS; default: the number of cores). Give the cores this worker may use."
    )
    var computeThreads: Int?

    @Option(
        help:
            "The worker's name in status and logs; unique per worker (env SHIFTWORK_WORKER_ID; default HOST-PID-RANDOM)."
    )
    var workerID: String?

    @Flag(help: "Let tasks read local paths and file:// URLs on this machine (env SHIFTWORK_ALLOW_LOCAL_FILES=1).")
    var allowLocalFiles = false

    @Option(
        help: "Seconds to finish running tasks after SIGTERM before leaving (env SHIFTWORK_DRAIN_TIMEOUT; default 60).")
    var drainTimeout: Int?

    @Option(
        help:
            "MiB of downloaded images kept for the tilt-shifts sent to this worker because it holds their input (env SHIFTWORK_INPUT_CACHE_MB; default \(ClusterDefaults.inputCacheBytes >> 20); the downloads waiting for their tilt-shift stay here, never on the coordinator: an image larger than this fails)."
    )
    var inputCacheMb: Int?

    @Option(
        help:
            "Serve the worker's probes at http://HOST:PORT: /livez (the process answers) and /readyz (registered with the coordinator, not draining; 503 otherwise), e.g. *:8080 for Kubernetes (every interface, IPv4 and IPv6) (env SHIFTWORK_HEALTH_LISTEN; default: off)."
    )
    var healthListen: String?

    @Option(
        help:
            "Chained tasks: on (a photo's tilt-shift runs right after its download, in the same slot, without the coordinator's round trip), off (sent apart, as to an older worker) or together (as on, and both results in one message: fewer messages, but a worker lost while filtering costs the download an attempt) (env SHIFTWORK_CHAINED_TASKS; default on)."
    )
    var chainedTasks: ChainedTasks?

    @Option(
        help:
            "Give back, when the coordinator asks, a tilt-shift still waiting for this worker's compute threads, so that a worker with an idle one runs it (work stealing at a batch's tail): on or off (env SHIFTWORK_GIVE_BACK; default on)."
    )
    var giveBack: GiveBack?

    @OptionGroup var sinkDirectory: SinkDirectoryOption
    @OptionGroup var limitOptions: LimitOptions
    @OptionGroup var download: DownloadOptions
    @OptionGroup var sources: SourcePolicyOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.worker", defaultLevel: .info)
        // Settings that would leave the worker useless fail it at once, naming the setting (a container
        // restarted for ever by its orchestrator says nothing).
        let coordinatorEndpoints = try coordinator.requiredEndpoints()
        try sinkDirectory.check()
        let sourcePolicy = try sources.policy()
        let limits = try limitOptions.limits()
        let allowLocal = Environment.flag(allowLocalFiles, "ALLOW_LOCAL_FILES")
        let computeThreads = try Environment.resolve(
            computeThreads, "COMPUTE_THREADS", default: ProcessInfo.processInfo.activeProcessorCount)
        guard computeThreads >= 1 else {
            throw CommandError(
                "--compute-threads (or SHIFTWORK_COMPUTE_THREADS) must be at least 1: the images this worker filters at once"
            )
        }
        let slots = try Environment.resolve(
            slots, "SLOTS", default: WorkerConfiguration.defaultSlots(computeThreads: computeThreads))
        guard (1...PeerInputRules.maxWorkerSlots).contains(slots) else {
            throw CommandError(
                "--slots (or SHIFTWORK_SLOTS) is \(slots): give 1 to \(PeerInputRules.maxWorkerSlots), the tasks this worker runs at once"
            )
        }
        var configuration = WorkerConfiguration(
            coordinators: coordinatorEndpoints,
            slots: slots,
            computeThreads: computeThreads,
            workerID: Environment.resolve(workerID, "WORKER_ID", default: WorkerConfiguration.defaultWorkerID()),
            fetch: try download.configuration(allowLocalFiles: allowLocal, maxBytes: limits.maxBytes),
            limits: limits,
            socketOptions: try coordinator.socketOptions(),
            inputCacheBytes: try Environment.resolve(
                inputCacheMb, "INPUT_CACHE_MB", default: ClusterDefaults.inputCacheBytes >> 20) << 20)
        configuration.chainedTasks =
            try chainedTasks ?? Environment.value("CHAINED_TASKS").map { text in
                guard let mode = ChainedTasks(rawValue: text.lowercased()) else {
                    throw CommandError(
                        "SHIFTWORK_CHAINED_TASKS=\(text) is not one of on, off, together (see shiftwork worker --help, --chained-tasks)"
                    )
                }
                return mode
            } ?? .on
        configuration.giveBack =
            try giveBack ?? Environment.value("GIVE_BACK").map { text in
                guard let mode = GiveBack(rawValue: text.lowercased()) else {
                    throw CommandError(
                        "SHIFTWORK_GIVE_BACK=\(text) is not one of on, off (see shiftwork worker --help, --give-back)")
                }
                return mode
            } ?? .on
        configuration.fetch.sourcePolicy = sourcePolicy
        logger.info("source policy: \(sourcePolicy.summary) (--allow-source-networks, --deny-source-networks)")
        let drainTimeout = try Environment.resolve(drainTimeout, "DRAIN_TIMEOUT", default: 60)
        let worker = try Worker(configuration: configuration, logger: logger)
        // The group stops its services in the reverse of this order: the worker drains first, while the
        // health server still answers (readiness 503: draining), then the server stops.
        var services: [any Service] = []
        if let address = healthListen ?? Environment.value("HEALTH_LISTEN") {
            let (host, port) = try CoordinatorCommand.hostAndPort(address, option: "--health-listen")
            do {
                let server = try await WorkerHealthServer.start(host: host, port: port) { await worker.health }
                services.append(server)
                print("health on http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)/readyz and /livez")
                fflush(nil)
            } catch {
                throw CommandError(
                    "cannot serve health on \(address): \(error)."
                        + ((error as? HTTPEndpointError)?.isAboutTheAddress == false
                            ? "" : " Choose another address with --health-listen."))
            }
        }
        services.append(worker)
        do {
            // SIGTERM (docker stop, compose scale down, Kubernetes) drains: running tasks finish, nothing new
            // starts; at the drain timeout, or on a second signal, the worker leaves with what still runs.
            try await ServiceRunner.run(
                services, maximumGracefulShutdownDuration: .seconds(drainTimeout), logger: logger)
        } catch {
            throw CommandError("\(error)")
        }
    }
}
extension ChainedTasks: ExpressibleByArgument {}
extension GiveBack: ExpressibleByArgument {}
