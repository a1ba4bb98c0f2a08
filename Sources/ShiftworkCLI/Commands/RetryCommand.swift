import ArgumentParser
import Cluster
import Foundation

/// `shiftwork retry BATCH [--items NAME...] --out DIR`: runs a finished batch's failed and cancelled items
/// again and writes their outputs as they arrive, as `submit` does.
struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Run a finished batch's failed and cancelled items again, and write their results into a directory.",
        discussion: """
            The items run as new attempts of the same batch (`status BATCH` lists every attempt); items that \
            succeeded keep their outputs and are not made again. The batch must have finished: cancel it \
            first to retry it while it runs. With nothing to retry (every item succeeded) it says so and \
            exits 0; it exits 1 when a retried item fails again, and with an error for an unknown batch, a \
            batch still running, or a name that is no item of the batch. The retry is journaled: a \
            coordinator with --data-dir that restarts carries it on.
            """)

    @Argument(help: "The batch ID, as `submit` or `status` printed it.")
    var batch: String

    @Option(
        name: .customLong("items"), parsing: .upToNextOption,
        help:
            "Only these items: each by its output name, its source, or its index as `status BATCH` shows it (default: every failed or cancelled item)."
    )
    var items: [String] = []

    @OptionGroup var options: BatchOutputOptions

    func run() async throws {
        var retry = BatchRetry(
            batchID: batch, items: items, outputDirectory: options.output.directory,
            overwrite: options.output.overwrite)
        retry.layout = options.output.layout
        try await options.run(command: "retry") { client, progress in
            try await retry.run(with: client, progress: progress)
        }
    }
}
