import Foundation
import HTTPEndpoints

/// The body of one `/api/events` response: `retry: 1000` (a browser's `EventSource` reconnects by itself
/// that soon after the stream ends, e.g. when the coordinator restarts), then an event at once and one
/// every `Dashboard.eventIntervalSeconds` until the client goes or the server stops. A batch's event
/// carries only the items that changed since the stream's last one.
///
/// Produced on the connection's thread; the coordinator is asked with `blockingAwait`.
final class DashboardEventStream: HTTPEndpointBody, @unchecked Sendable {
    // @unchecked: `next` and `finish` are called by the connection's thread, one at a time.
    private let dashboard: Dashboard
    private let batchID: String?
    private var items = ItemChangeTracker()
    private var sentRetry = false
    private var nextEvent: Date?

    /// A stream of `dashboard`'s events, of the cluster or of `batchID`; counted in by the caller
    /// (`Dashboard.openStream`), counted out by ``finish()``.
    init(dashboard: Dashboard, batchID: String?) {
        self.dashboard = dashboard
        self.batchID = batchID
    }

    func next(stop: StopSignal) -> [UInt8]? {
        guard sentRetry else {
            sentRetry = true
            return Array("retry: 1000\n\n".utf8)
        }
        if let nextEvent, !stop.wait(seconds: max(0, nextEvent.timeIntervalSinceNow)) { return nil }
        guard !stop.isRaised else { return nil }
        nextEvent = Date(timeIntervalSinceNow: Double(Dashboard.eventIntervalSeconds))
        let (dashboard, batchID) = (self.dashboard, self.batchID)
        let status = blockingAwait { await dashboard.source.dashboardStatus(batchID: batchID ?? "") }
        return Array(dashboard.event(batchID: batchID, status: status, items: &items).utf8)
    }

    func finish() {
        dashboard.closeStream()
    }
}
