import ArgumentParser
import Cluster
import Foundation
import Imaging

/// `shiftwork run`: the embedded default — coordinator and workers in this process, over `inproc://`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Tilt-shift images with a coordinator and workers inside this process (no set-up).",
        discussion: "Inputs are http(s) or file URLs, or local paths. Outputs keep the input's name and format.")

    @Argument(help: "Images to process: URLs or paths.")
    var inputs: [String]

    @Option(name: .customLong("out"), help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Option(help: "Workers to run (env SHIFTWORK_WORKERS; default 1).")
    var workers: Int?

    @Option(help: "Slots per worker: images processed at once (env SHIFTWORK_SLOTS; default: the number of cores).")
    var slots: Int?

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    @OptionGroup var filter: FilterOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger(label: "shiftwork.run", defaultLevel: .warning)
        let reporter = BatchReporter(json: json)
        let submission = BatchSubmission(
            inputs: try InputList.normalize(inputs),
            outputDirectory: URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out")),
            parameters: try filter.parameters(), encoding: try filter.encoding())
        let cluster = try await EmbeddedCluster.start(
            workerCount: try Environment.resolve(workers, "WORKERS", default: 1),
            slotsPerWorker: try Environment.resolve(slots, "SLOTS", default: ProcessInfo.processInfo.activeProcessorCount),
            logger: logger)
        let summary: BatchSummary
        do {
            summary = try await submission.run(with: cluster.client, progress: { reporter.report($0) })
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
        if !reporter.summarize(summary) { throw ExitCode(1) }
    }
}
