import ArgumentParser
import Cluster
import Foundation
import Messaging

/// `shiftwork cancel BATCH [ITEM...]`: cancels a batch, or some of its items, and says how many items
/// the coordinator cancelled.
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
        let accepted = try await withCoordinator(coordinator) { client in
            try await client.cancel(batchID: batch, itemIndexes: items)
        }
        let count = Int(accepted.cancelledItems)
        let cancelled = "\(count) item\(count == 1 ? "" : "s") cancelled"
        if count == 0 {
            print("batch \(batch): nothing cancelled, every item asked for had finished")
        } else if items.isEmpty {
            print("batch \(batch): \(cancelled) (items that had finished keep their results)")
        } else {
            print("batch \(batch): \(cancelled) of the \(Set(items).count) asked for")
        }
    }
}
