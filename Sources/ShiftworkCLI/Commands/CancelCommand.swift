import ArgumentParser
import Cluster
import Foundation
import Messaging

/// `shiftwork cancel BATCH [ITEM...]`: cancels a batch, or some of its items.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a batch, or some of its items (by index, as `status BATCH` shows them).")

    @Argument(help: "The batch ID.")
    var batch: String

    @Argument(help: "Item indexes to cancel (default: every item).")
    var items: [UInt32] = []

    @OptionGroup var coordinator: CoordinatorEndpointOption

    func run() async throws {
        try await withCoordinator(coordinator) { client in
            // Confirm the batch exists (and the coordinator answers) before asking to cancel it.
            let status = try await client.status(batchID: batch)
            if status.batches.isEmpty {
                throw CommandError("the coordinator knows no batch '\(batch)': `shiftwork status` lists the batches it knows")
            }
            await client.cancel(batchID: batch, itemIndexes: items)
        }
        print(items.isEmpty ? "cancelling batch \(batch)" : "cancelling items \(items.map(String.init).joined(separator: ", ")) of batch \(batch)")
    }
}
