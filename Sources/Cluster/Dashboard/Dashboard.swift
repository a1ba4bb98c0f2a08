import Foundation
import Runtime
import Wire

/// The coordinator's live web dashboard: the cluster, its batches and one batch's items, read from a
/// `DashboardSource` (the same `StatusReport` that answers `shiftwork status`), served beside `/metrics`
/// by `MetricsServer`.
///
/// Routing and access are decided by `DashboardRouter` (pure); this class turns what a route needs into
/// responses. Fetching runs on the coordinator's executor; everything else (JSON, pages) on the HTTP
/// server's thread, and previews on a thread of their own (`DashboardPreviews`): none of it on the
/// cooperative pool.
public final class Dashboard: Sendable {
    /// Seconds between two events of an event stream.
    public static let eventIntervalSeconds: Int64 = 1
    /// Seconds between two samples of the throughput history.
    public static let sampleIntervalSeconds: Int64 = 2
    /// Samples kept: ten minutes.
    public static let historyCapacity = 300
    /// Event streams served at once; more are answered 503.
    public static let maxEventStreams = 64

    let router: DashboardRouter
    let source: any DashboardSource
    let tokenFile: DashboardTokenFile?
    /// Whether finished outputs are kept (and so have previews).
    let keepsOutputs: Bool
    let previews = DashboardPreviews()
    let history = LockedValue(ThroughputHistory(capacity: Dashboard.historyCapacity))
    private let openStreams = LockedValue(0)

    /// A dashboard of `source`, for a server bound to `boundHost`; with `tokenFile`, only for those who
    /// present its token. `keepsOutputs`: the coordinator keeps finished outputs (`--data-dir`), which
    /// the dashboard then previews.
    public init(source: any DashboardSource, boundHost: String, tokenFile: DashboardTokenFile?, keepsOutputs: Bool) {
        self.source = source
        self.tokenFile = tokenFile
        self.keepsOutputs = keepsOutputs
        router = DashboardRouter(access: DashboardAccess(boundHost: boundHost, hasToken: tokenFile != nil))
    }

    /// Who may read the dashboard.
    public var access: DashboardAccess { router.access }

    /// The route for `request`, with the token as its file holds it now.
    func route(_ request: DashboardRequest) -> DashboardRoute {
        router.route(request, token: tokenFile?.current())
    }

    /// Ends the preview thread.
    func shutdown() { previews.shutdown() }

    // MARK: Event streams

    /// Counts an event stream in; `false` when `maxEventStreams` are open.
    func openStream() -> Bool {
        openStreams.withLock { count in
            guard count < Self.maxEventStreams else { return false }
            count += 1
            return true
        }
    }

    /// Counts an event stream out.
    func closeStream() { openStreams.withLock { $0 -= 1 } }

    /// Records a sample of `status` in the history.
    func sample(_ status: DashboardStatus, now: Date = Date()) {
        guard case .reply(let reply) = status else { return }
        let sample = ThroughputHistory.Sample(
            unixMilliseconds: Int64(now.timeIntervalSince1970 * 1000), tasksPerSecond: reply.tasksPerSecond,
            queuedTasks: reply.queuedTasks, runningTasks: reply.runningTasks, workers: reply.workers.count)
        history.withLock { $0.record(sample) }
    }

    // MARK: Responses

    /// The page for the cluster, or for `batchID` when the coordinator knows it (404 otherwise).
    func page(batchID: String?, status: DashboardStatus) -> DashboardResponse {
        if let batchID, let problem = Self.unknownBatch(batchID, status) {
            return DashboardRouter.notFound(isAPI: false, what: problem.title, paragraphs: problem.paragraphs)
        }
        let event = StatusJSON.text(eventObject(batchID: batchID, status: status), compact: true)
        return DashboardResponse(
            status: 200, contentType: "text/html; charset=utf-8", text: DashboardPage.html(initialEvent: event))
    }

    /// `/api/status` or `/api/batches/ID`: what `shiftwork status [ID] --json` prints.
    func statusJSON(batchID: String?, status: DashboardStatus) -> DashboardResponse {
        if let batchID, let problem = Self.unknownBatch(batchID, status) {
            return DashboardRouter.notFound(isAPI: true, what: problem.title, paragraphs: problem.paragraphs)
        }
        guard case .reply(let reply) = status else { return .jsonError(status: 500, "no status") }
        return DashboardResponse(
            status: 200, contentType: "application/json", text: StatusJSON.text(StatusJSON.object(reply)))
    }

    /// One event of `/api/events`: the status (with the batch's items when `batchID` is given: those that
    /// changed since the stream's last event, as `items` tracks them), the throughput history, and whether
    /// previews exist.
    func event(batchID: String?, status: DashboardStatus, items: inout ItemChangeTracker) -> String {
        // One `data:` line: the JSON has no line breaks when compact.
        "data: " + StatusJSON.text(eventObject(batchID: batchID, status: status, items: &items), compact: true) + "\n\n"
    }

    /// What an event carries, as a JSON object: with every item of the batch (the page's first event).
    func eventObject(batchID: String?, status: DashboardStatus) -> JSONValue {
        var everyItem = ItemChangeTracker()
        return eventObject(batchID: batchID, status: status, items: &everyItem)
    }

    /// What an event carries, as a JSON object. The batch's `item_states` are the items that changed since
    /// the last event `items` tracked, and `item_states_complete` says whether they are all of them (else
    /// the page merges them into those it has, by index).
    func eventObject(batchID: String?, status: DashboardStatus, items: inout ItemChangeTracker) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("previews", .bool(keepsOutputs)), ("history", history.withLock { $0.jsonObject }),
            ("time", .integer(Int(Date().timeIntervalSince1970 * 1000))),
        ]
        if case .reply(let reply) = status {
            members.append(("coordinator", .string(reply.coordinatorID)))
            members.append(("status", StatusJSON.object(reply)))
        }
        if let batchID {
            if let problem = Self.unknownBatch(batchID, status) {
                members.append(("batch_error", .string(([problem.title] + problem.paragraphs).joined(separator: " "))))
            } else if case .reply(let reply) = status, let batch = reply.batches.first {
                let (changed, complete) = items.changes(in: batch.items)
                members.append(
                    ("batch", StatusJSON.object(batch, items: changed).setting("item_states_complete", .bool(complete)))
                )
            }
        }
        return .object(members)
    }

    /// Why `batchID` cannot be shown (`nil` when `status` holds it).
    static func unknownBatch(_ batchID: String, _ status: DashboardStatus) -> (title: String, paragraphs: [String])? {
        switch status {
        case .retired(let reason):
            return ("Batch \(batchID) is no longer kept", [reason])
        case .reply(let reply):
            if reply.batches.contains(where: { $0.batchID == batchID }) { return nil }
            return (
                "Unknown batch \(batchID)",
                [
                    "This coordinator does not know it: check the ID that submit printed, or see the list of batches on the cluster page."
                ]
            )
        }
    }

    /// The preview of item `itemIndex` of `batchID` (404 without a stored image).
    func preview(batchID: String, itemIndex: Int) async -> DashboardResponse {
        guard keepsOutputs, let file = await source.storedOutputFile(batchID: batchID, itemIndex: itemIndex) else {
            return .jsonError(
                status: 404,
                "no preview: the coordinator keeps outputs only with --data-dir, and only of items that succeeded")
        }
        do {
            let jpeg = try await previews.preview(of: file, key: "\(batchID)/\(itemIndex)")
            var response = DashboardResponse(status: 200, contentType: "image/jpeg", body: jpeg)
            response.headers.removeAll { $0.name == "Cache-Control" }
            response.headers.append(.init("Cache-Control", "private, max-age=3600"))  // an output never changes
            return response
        } catch {
            return .jsonError(status: 404, "no preview: \(error)")
        }
    }
}
