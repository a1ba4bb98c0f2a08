import Foundation
import Wire

extension Coordinator: DashboardSource {
    /// The status `shiftwork status [BATCH]` gets (`StatusReport`), for the dashboard.
    public func dashboardStatus(batchID: String) -> DashboardStatus {
        switch StatusReport(coordinator: self, now: .now).answer(to: StatusRequest(requestID: "", batchID: batchID)) {
        case .refusal(let refusal): return .retired(reason: refusal.reason)
        case .statusReply(let reply): return .reply(reply)
        default:
            return .reply(
                StatusReport(coordinator: self, now: .now).reply(to: StatusRequest(requestID: "", batchID: batchID)))
        }
    }

    /// Where a succeeded item's image is stored (with `--data-dir`), for the dashboard's previews.
    public func storedOutputFile(batchID: String, itemIndex: Int) -> URL? {
        guard let journal, let batch = registry.batches[batchID], batch.items.indices.contains(itemIndex),
            batch.items[itemIndex].state == .succeeded,
            case .output(let output)? = batch.finishedItem(itemIndex)?.outcome, output.mediaType.hasPrefix("image/")
        else { return nil }
        return journal.resultURL(batchID: batchID, itemIndex: UInt32(itemIndex))
    }
}
