import ArgumentParser
import Cluster
import Foundation

/// `shiftwork results BATCH --out DIR`: attaches to a batch the coordinator has and writes its outputs.
struct ResultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "results",
        abstract: "Fetch a batch's results: those finished so far, then the rest as they finish.",
        discussion: """
            Use it after `submit` was interrupted, or after the coordinator restarted, or from another \
            machine. The coordinator keeps results for this only when it runs with --data-dir.
            """)

    @Argument(help: "The batch ID, as `submit` or `status` printed it.")
    var batch: String

    @Option(name: .customLong("out"), help: "Directory to write the outputs into (env SHIFTWORK_OUT; default ./shiftwork-out).")
    var outputDirectory: String?

    @Flag(help: "Replace files of the same name in the output directory (by default an output takes the next free name, x-2.jpg, and says so).")
    var overwrite = false

    @Flag(help: "Print one JSON document with every item's outcome at the end, instead of progress.")
    var json = false

    @Option(help: "Seconds to wait for the coordinator to answer (env SHIFTWORK_TIMEOUT; default 10).")
    var timeout: Int?

    @OptionGroup var coordinator: CoordinatorEndpointOption
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        _ = try logging.makeLogger(label: "shiftwork.results", defaultLevel: .warning)
        let reporter = BatchReporter(json: json)
        let results = BatchResults(
            batchID: batch,
            outputDirectory: URL(fileURLWithPath: Environment.resolve(outputDirectory, "OUT", default: "shiftwork-out")),
            overwrite: overwrite)
        let timeout = try Environment.resolve(timeout, "TIMEOUT", default: 10)
        let summary = try await withCoordinator(coordinator, responseTimeout: .seconds(timeout)) { client in
            try await results.run(with: client, progress: { reporter.report($0) })
        }
        if !reporter.summarize(summary) { throw ExitCode(1) }
    }
}
