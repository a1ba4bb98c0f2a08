/// What the HTTP server does with a request, as `DashboardRouter` decides it.
public enum DashboardRoute: Sendable, Equatable {
    /// `/metrics`: Prometheus' text format, to anyone (as before the dashboard).
    case metrics
    /// A response decided without the coordinator: a page, script or style sheet of the dashboard, a
    /// redirect, or an error page (401, 403, 404, 405).
    case respond(DashboardResponse)
    /// The dashboard's page: the cluster, or one batch (404 when the coordinator does not know it).
    case page(batchID: String?)
    /// `/api/status`: `shiftwork status --json`.
    case statusJSON
    /// `/api/batches/ID`: `shiftwork status ID --json` (404 when unknown).
    case batchJSON(batchID: String)
    /// `/api/events[?batch=ID]`: server-sent events, one status a second.
    case events(batchID: String?)
    /// `/api/batches/ID/items/N/preview`: a small JPEG of a finished item's output.
    case preview(batchID: String, itemIndex: Int)
}
