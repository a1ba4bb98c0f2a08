import Foundation
import Wire

/// What the dashboard reads of a coordinator (the `Coordinator` is one): the status that
/// `shiftwork status` gets, and where finished outputs are stored.
public protocol DashboardSource: Sendable {
    /// The status `shiftwork status [BATCH]` gets now (the batch's items with `batchID`, else every batch).
    func dashboardStatus(batchID: String) async -> DashboardStatus
    /// The file holding a succeeded item's output, when the coordinator keeps results (`--data-dir`);
    /// `nil` otherwise, or when the item did not succeed or its output is not an image.
    func storedOutputFile(batchID: String, itemIndex: Int) async -> URL?
}

/// A coordinator's answer to a status request, for the dashboard.
public enum DashboardStatus: Sendable, Equatable {
    /// Its reply (without batches when it does not know the batch asked for).
    case reply(StatusReply)
    /// The batch asked for was retired: why and when, as `shiftwork status BATCH` says it.
    case retired(reason: String)
}
