import ArgumentParser
import Cluster
import Foundation
import Messaging
import Wire

/// `shiftwork status [BATCH]`: the cluster's workers and queue, or one batch's items.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the cluster's workers and queue, or the items of one batch.")

    @Argument(help: "A batch ID (from submit's output) to show item by item.")
    var batch: String?

    @Flag(help: "Print JSON for scripts.")
    var json = false

    @Flag(help: "Follow: print the status again every --interval seconds until interrupted.")
    var watch = false

    @Option(help: "Seconds between updates with --watch.")
    var interval: Double = 2

    @OptionGroup var coordinator: CoordinatorEndpointOption

    func validate() throws {
        if watch && !(interval > 0) { throw ValidationError("--interval must be a positive number of seconds") }
    }

    func run() async throws {
        try await withCoordinator(coordinator) { client in
            repeat {
                let reply = try await client.status(batchID: batch ?? "")
                if let batch, reply.batches.isEmpty {
                    throw ClusterClientError.unknownBatch(batchID: batch)
                }
                if watch && !json && isatty(STDOUT_FILENO) != 0 {
                    print("\u{1B}[H\u{1B}[2J", terminator: "")  // clear the screen, as `watch` does
                }
                print(
                    json
                        ? StatusFormatter.json(reply, compact: watch)
                        : StatusFormatter.text(reply, batchRequested: batch != nil))
                fflush(nil)
                if watch { try await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
            } while watch
        }
    }
}
