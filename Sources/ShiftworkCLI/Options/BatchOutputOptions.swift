import ArgumentParser
import Cluster

/// The options and the run that `results` and `retry` share: both follow a batch the coordinator has and
/// write its outputs as they arrive, report each item, and exit 1 unless every item they waited for succeeded.
struct BatchOutputOptions: ParsableArguments {
    @OptionGroup var output: OutputOptions

    @Option(help: "Seconds to wait for the coordinator to answer (env SHIFTWORK_TIMEOUT; default 10).")
    var timeout: Int?

    @OptionGroup var coordinator: CoordinatorEndpointOption
    @OptionGroup var logging: LoggingOptions

    /// Runs `body` with a client of the coordinator and a reporter's progress callback, then prints the
    /// summary it returns.
    ///
    /// - Throws: `ExitCode(1)` when an item failed or was cancelled; what `body` or the options throw.
    func run(
        command: String,
        _ body: (ClusterClient, @Sendable (BatchProgress) -> Void) async throws -> BatchSummary
    ) async throws {
        _ = try logging.makeLogger(label: "shiftwork.\(command)", defaultLevel: .warning)
        let reporter = BatchReporter(json: output.json)
        let responseTimeout = Duration.seconds(try Environment.resolve(timeout, "TIMEOUT", default: 10))
        // Printed before the client closes, as `submit` does.
        let allSucceeded = try await withCoordinator(coordinator, responseTimeout: responseTimeout) { client in
            reporter.summarize(try await body(client, { reporter.report($0) }))
        }
        if !allSucceeded { throw ExitCode(1) }
    }
}
