import ArgumentParser
import Cluster
import Fetching
import Foundation
import Imaging

/// `shiftwork run`: the embedded default — coordinator and workers in this process, over `inproc://`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Tilt-shift images with a coordinator and workers inside this process (no set-up).",
        discussion:
            "Inputs are http(s) or file URLs, local paths or directories, or '-' for paths read from standard input, one a line. Outputs keep the input's name and format, and a directory's folders (--flat: all at the top of --out)."
    )

    @Option(help: "Workers to run (env SHIFTWORK_WORKERS; default 1).")
    var workers: Int?

    @Option(help: "Slots per worker: images processed at once (env SHIFTWORK_SLOTS; default: the number of cores).")
    var slots: Int?

    @OptionGroup var batch: BatchOptions
    @OptionGroup var limitOptions: LimitOptions
    @OptionGroup var download: DownloadOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.run", defaultLevel: .warning)
        let reporter = BatchReporter(json: batch.json)
        let submission = try await batch.submission()
        let limits = try limitOptions.limits()
        let summary = try await EmbeddedCluster.run(
            workerCount: try Environment.resolve(workers, "WORKERS", default: 1),
            slotsPerWorker: try Environment.resolve(
                slots, "SLOTS", default: ProcessInfo.processInfo.activeProcessorCount),
            fetch: try download.configuration(allowLocalFiles: true, maxBytes: limits.maxBytes),
            limits: limits,
            logger: logger
        ) { cluster in
            try await submission.run(with: cluster.client, progress: { reporter.report($0) })
        }
        if !reporter.summarize(summary) { throw ExitCode(1) }
    }
}
