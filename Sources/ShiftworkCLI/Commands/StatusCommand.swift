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

    @OptionGroup var coordinator: CoordinatorEndpointOption

    func run() async throws {
        let context = try MessagingContext()
        let client = try await ClusterClient(endpoint: coordinator.endpoint, context: context, responseTimeout: .seconds(5))
        let result: Result<StatusReply, any Error>
        do {
            result = .success(try await client.status(batchID: batch ?? ""))
        } catch {
            result = .failure(error)
        }
        await client.close()
        await context.terminate()
        let reply = try result.get()
        if let batch, reply.batches.isEmpty {
            throw CommandError("the coordinator knows no batch '\(batch)': `shiftwork status` lists the batches it knows")
        }
        print(json ? StatusFormatter.json(reply) : StatusFormatter.text(reply, batchRequested: batch != nil))
    }
}
