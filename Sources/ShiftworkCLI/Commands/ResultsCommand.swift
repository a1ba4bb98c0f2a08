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

    @OptionGroup var output: OutputOptions

    @Option(help: "Seconds to wait for the coordinator to answer (env SHIFTWORK_TIMEOUT; default 10).")
    var timeout: Int?
    @OptionGroup var coordinator: CoordinatorEndpointOption
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        _ = try logging.makeLogger(label: "shiftwork.results", defaultLevel: .warning)
        let reporter = BatchReporter(json: output.json)
        let results = BatchResults(batchID: batch, outputDirectory: output.directory, overwrite: output.overwrite)
        let summary = try await withCoordinator(coordinator, responseTimeout: .seconds(try Environment.resolve(timeout, "TIMEOUT", default: 10))) { client in
            try await results.run(with: client, progress: { reporter.report($0) })
        }
        if !reporter.summarize(summary) { throw ExitCode(1) }
    }
}
