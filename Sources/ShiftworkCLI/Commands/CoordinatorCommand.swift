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
        Self.tuneAllocator()
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
