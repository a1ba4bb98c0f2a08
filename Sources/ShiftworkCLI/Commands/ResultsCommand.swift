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

    @OptionGroup var options: BatchOutputOptions

    func run() async throws {
        var results = BatchResults(
            batchID: batch, outputDirectory: options.output.directory, overwrite: options.output.overwrite)
        results.layout = options.output.layout
        try await options.run(command: "results") { client, progress in
            try await results.run(with: client, progress: progress)
        }
    }
}
