import CoreMetrics
import Prometheus

/// The coordinator's metrics, made through swift-metrics into a `PrometheusCollectorRegistry` of its own,
/// and written from a `MetricsReport` when the page is scraped.
///
/// Sampled at scrape time rather than updated at every event: the dispatcher and the batch registry are
/// state machines free of side effects and the one source of these figures (status replies read the same
/// counts), so the metrics mirror them when asked, at a cost of O(workers) per scrape, instead of a second
/// set of increments threaded through them that could drift. Gauges are set to the current value;
/// counters are advanced by what their source counted since the last scrape, so they only grow.
/// A departed worker's series are removed, as its record is.
struct CoordinatorMetrics {
    /// Every metric's name and help text (its type is that of the swift-metrics object made for it).
    static let help: [String: String] = [
        "shiftwork_pair_active": "A coordinator of a pair (--ha): 1 while it is the active one, 0 otherwise.",
        "shiftwork_pair_backup_lag_records": "The active coordinator of a pair: records its peer does not hold yet.",
        "shiftwork_pair_backup_lag_seconds": "The active coordinator of a pair: how long its peer has been behind.",
        "shiftwork_pair_refused_total":
            "A coordinator of a pair: what it refused from its peer, by what: announcements (peer: another cluster, another major version, another pair version) and journal stream messages (stream: a bad checksum, a wrong count, a gap, an older snapshot).",
        "shiftwork_pair_acknowledgements_held":
            "The active coordinator of a pair: messages waiting for the peer to hold their records.",
        "shiftwork_workers": "Workers connected to the coordinator.",
        "shiftwork_worker_slots": "Tasks a worker runs at once.",
        "shiftwork_worker_running_tasks": "Tasks a worker holds now (its load).",
        "shiftwork_worker_tasks_completed_total": "Tasks a worker completed.",
        "shiftwork_worker_tasks_failed_total": "Tasks that failed on a worker.",
        "shiftwork_tasks_queued": "Tasks accepted and not started: the queue depth.",
        "shiftwork_tasks_running": "Tasks sent to workers and not answered yet.",
        "shiftwork_tasks_completed_total": "Tasks completed.",
        "shiftwork_tasks_failed_total": "Tasks failed.",
        "shiftwork_tasks_per_second": "Tasks finished per second over the last 10 seconds.",
        "shiftwork_batches_accepted_total": "Batches accepted.",
        "shiftwork_batches_running": "Batches with unfinished items.",
        "shiftwork_tasks_local_input_total":
            "Tasks sent to the worker that already held their input (it did not travel).",
        "shiftwork_tasks_chained_total":
            "Tilt-shifts that ran chained to their download on its worker, without an assignment of their own.",
        "shiftwork_late_results_used_total":
            "Tasks completed by the success of an attempt already timed out, or let go with a worker declared dead, that came before any other result (first valid result wins).",
        "shiftwork_tasks_asked_back_total":
            "Tasks the coordinator asked a worker to give back, for a worker with an idle compute thread (stealing at a batch's tail).",
        "shiftwork_tasks_given_back_total": "Of those, tasks given back before they started and assigned again.",
        "shiftwork_tasks_local_input_missed_total":
            "Of those, tasks whose input the worker no longer had, sent again with the bytes (workers of protocol minor 2).",
        "shiftwork_tasks_input_lost_total":
            "Tilt-shifts whose downloaded image was lost with its worker (or evicted): the download ran again elsewhere.",
        "shiftwork_download_bytes_received_total":
            "Bytes of downloaded images that reached the coordinator (0 when workers keep them: minor 3).",
        "shiftwork_output_bytes_received_total":
            "Bytes of outputs that reached the coordinator (0 with a sink: workers write them).",
        "shiftwork_assignments_lost_total":
            "Assignments a worker did not receive whole (found through its heartbeats) and queued again.",
        "shiftwork_tasks_resent_total":
            "Tasks queued to run again after an attempt that gave no usable result, by reason: assignment_lost, worker_lost, timed_out, failed (a transient failure retried), input_missing, handed_back (by a leaving worker, before it started).",
        "shiftwork_messages_dropped_total":
            "Messages dropped: malformed, from the wrong kind of peer, or answering an attempt that is no longer current.",
        "shiftwork_peers_refused_total":
            "Connections refused by CurveZMQ authentication (public key not on the allow-list).",
        "shiftwork_messages_refused_total":
            "Messages refused for a field out of bounds (docs/protocol.md, \"Bounds\"), by field.",
        "shiftwork_client_queued_items":
            "Unfinished items of a client (its key, or its connection without CurveZMQ), against --max-queued-items-per-client.",
        "shiftwork_client_batches":
            "Batches the coordinator keeps for a client (running, and finished ones kept for status), against --max-batches-per-client.",
        "shiftwork_refusals_total":
            "Requests refused because the sender's key lacks the role they need or does not own the batch, and worker messages that do not speak for their sender (another key, worker ID or connection), by the key's roles, the request and the reason.",
    ]

    /// The registry the metrics are recorded in, rendered by `text`.
    let registry: PrometheusCollectorRegistry
    private let factory: DescribedPrometheusFactory
    private let workers: CoreMetrics.Gauge
    private let tasksQueued: CoreMetrics.Gauge
    private let tasksRunning: CoreMetrics.Gauge
    private let tasksPerSecond: CoreMetrics.Gauge
    private let batchesRunning: CoreMetrics.Gauge
    private var tasksCompleted: MirroredCounter
    private var tasksFailed: MirroredCounter
    private var batchesAccepted: MirroredCounter
    private var localInputs: MirroredCounter
    private var localInputsMissed: MirroredCounter
    private var chainedTasks: MirroredCounter
    private var lateResultsUsed: MirroredCounter
    private var tasksAskedBack: MirroredCounter
    private var tasksGivenBack: MirroredCounter
    private var assignmentsLost: MirroredCounter
    /// `shiftwork_tasks_resent_total`, one series per reason (every reason from the start, at 0).
    private var resends: [TaskResends.Reason: MirroredCounter] = [:]
    private var inputsLost: MirroredCounter
    private var downloadBytesReceived: MirroredCounter
    private var outputBytesReceived: MirroredCounter
    private var messagesDropped: MirroredCounter
    /// Made at the first report that has it (with CurveZMQ only).
    private var peersRefused: MirroredCounter?
    private var perWorker: [String: WorkerSeries] = [:]
    /// `shiftwork_refusals_total`, one series per labels seen.
    private var accessRefusals: [AccessRefusal.Labels: MirroredCounter] = [:]
    /// `shiftwork_messages_refused_total`, one series per field seen.
    private var boundRefusals: [String: MirroredCounter] = [:]
    /// `shiftwork_client_queued_items` and `shiftwork_client_batches`, per client with batches kept.
    /// A coordinator of a pair: its role and the backup's lag (made on the first report with a pair).
    private var pair:
        (
            active: CoreMetrics.Gauge, lagRecords: CoreMetrics.Gauge, lagSeconds: CoreMetrics.Gauge,
            held: CoreMetrics.Gauge
        )?
    /// `shiftwork_pair_refused_total{what="peer"|"stream"}` (made on the first report with a pair).
    private var pairRefused: (peer: MirroredCounter, stream: MirroredCounter)?
    private var perClient: [String: (queuedItems: CoreMetrics.Gauge, batches: CoreMetrics.Gauge)] = [:]

    /// Metrics recorded in `registry`, which nothing else should record into under these names.
    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        let factory = DescribedPrometheusFactory(registry: registry, help: Self.help)
        self.factory = factory
        func gauge(_ name: String) -> CoreMetrics.Gauge {
            CoreMetrics.Gauge(label: name, dimensions: [], factory: factory)
        }
        func counter(_ name: String) -> MirroredCounter {
            MirroredCounter(CoreMetrics.Counter(label: name, dimensions: [], factory: factory))
        }
        workers = gauge("shiftwork_workers")
        tasksQueued = gauge("shiftwork_tasks_queued")
        tasksRunning = gauge("shiftwork_tasks_running")
        tasksPerSecond = gauge("shiftwork_tasks_per_second")
        batchesRunning = gauge("shiftwork_batches_running")
        tasksCompleted = counter("shiftwork_tasks_completed_total")
        tasksFailed = counter("shiftwork_tasks_failed_total")
        batchesAccepted = counter("shiftwork_batches_accepted_total")
        localInputs = counter("shiftwork_tasks_local_input_total")
        localInputsMissed = counter("shiftwork_tasks_local_input_missed_total")
        chainedTasks = counter("shiftwork_tasks_chained_total")
        lateResultsUsed = counter("shiftwork_late_results_used_total")
        tasksAskedBack = counter("shiftwork_tasks_asked_back_total")
        tasksGivenBack = counter("shiftwork_tasks_given_back_total")
        assignmentsLost = counter("shiftwork_assignments_lost_total")
        inputsLost = counter("shiftwork_tasks_input_lost_total")
        downloadBytesReceived = counter("shiftwork_download_bytes_received_total")
        outputBytesReceived = counter("shiftwork_output_bytes_received_total")
        messagesDropped = counter("shiftwork_messages_dropped_total")
        for reason in TaskResends.Reason.allCases {
            resends[reason] = MirroredCounter(
                CoreMetrics.Counter(
                    label: "shiftwork_tasks_resent_total", dimensions: [("reason", reason.rawValue)], factory: factory))
        }
    }

    /// Records `report`.
    mutating func record(_ report: MetricsReport) {
        if let status = report.pair {
            if pair == nil {
                let factory = self.factory
                func gauge(_ name: String) -> CoreMetrics.Gauge {
                    CoreMetrics.Gauge(label: name, dimensions: [], factory: factory)
                }
                pair = (
                    gauge("shiftwork_pair_active"), gauge("shiftwork_pair_backup_lag_records"),
                    gauge("shiftwork_pair_backup_lag_seconds"), gauge("shiftwork_pair_acknowledgements_held")
                )
            }
            pair?.active.record(status.state == .active ? 1 : 0)
            pair?.lagRecords.record(Int(clamping: status.lagRecords))
            pair?.lagSeconds.record(Double(status.lagMs) / 1000)
            pair?.held.record(Int(status.heldMessages))
        }
        if let peer = report.pairRefusedAnnouncements, let stream = report.pairRefusedStreamMessages {
            let factory = self.factory
            func counter(_ what: String) -> MirroredCounter {
                MirroredCounter(
                    CoreMetrics.Counter(
                        label: "shiftwork_pair_refused_total", dimensions: [("what", what)], factory: factory))
            }
            var refused = pairRefused ?? (counter("peer"), counter("stream"))
            refused.peer.advance(to: peer)
            refused.stream.advance(to: stream)
            pairRefused = refused
        }
        workers.record(report.workers.count)
        tasksQueued.record(report.tasksQueued)
        tasksRunning.record(report.tasksRunning)
        tasksPerSecond.record(report.tasksPerSecond)
        batchesRunning.record(report.batchesRunning)
        tasksCompleted.advance(to: report.tasksCompleted)
        tasksFailed.advance(to: report.tasksFailed)
        batchesAccepted.advance(to: report.batchesAccepted)
        localInputs.advance(to: report.localInputs)
        localInputsMissed.advance(to: report.localInputsMissed)
        chainedTasks.advance(to: report.chainedTasks)
        lateResultsUsed.advance(to: report.lateResultsUsed)
        tasksAskedBack.advance(to: report.tasksAskedBack)
        tasksGivenBack.advance(to: report.tasksGivenBack)
        assignmentsLost.advance(to: report.assignmentsLost)
        inputsLost.advance(to: report.inputsLost)
        downloadBytesReceived.advance(to: report.downloadBytesReceived)
        outputBytesReceived.advance(to: report.outputBytesReceived)
        messagesDropped.advance(to: report.messagesDropped)
        for reason in TaskResends.Reason.allCases { resends[reason]?.advance(to: report.resends[reason]) }
        if let refused = report.peersRefused {
            if peersRefused == nil {
                peersRefused = MirroredCounter(
                    CoreMetrics.Counter(label: "shiftwork_peers_refused_total", dimensions: [], factory: factory))
            }
            peersRefused?.advance(to: UInt64(max(0, refused)))
        }
        for (labels, total) in report.accessRefusals {
            var counter =
                accessRefusals[labels]
                ?? MirroredCounter(
                    CoreMetrics.Counter(
                        label: "shiftwork_refusals_total",
                        dimensions: [
                            ("role", labels.role), ("request", labels.request), ("reason", labels.reason.rawValue),
                        ],
                        factory: factory))
            counter.advance(to: total)
            accessRefusals[labels] = counter
        }
        for (field, total) in report.refusedMessages {
            var counter =
                boundRefusals[field]
                ?? MirroredCounter(
                    CoreMetrics.Counter(
                        label: "shiftwork_messages_refused_total", dimensions: [("field", field)], factory: factory))
            counter.advance(to: total)
            boundRefusals[field] = counter
        }
        for (client, gauges) in perClient where report.clients[client] == nil {
            gauges.queuedItems.destroy()
            gauges.batches.destroy()
            perClient[client] = nil
        }
        for (client, usage) in report.clients {
            let gauges =
                perClient[client] ?? (
                    CoreMetrics.Gauge(
                        label: "shiftwork_client_queued_items", dimensions: [("client", client)], factory: factory),
                    CoreMetrics.Gauge(
                        label: "shiftwork_client_batches", dimensions: [("client", client)], factory: factory)
                )
            gauges.queuedItems.record(usage.queuedItems)
            gauges.batches.record(usage.batches)
            perClient[client] = gauges
        }
        for (workerID, series) in perWorker where report.workers[workerID] == nil {
            series.destroy()
            perWorker[workerID] = nil
        }
        for (workerID, figures) in report.workers {
            var series = perWorker[workerID] ?? WorkerSeries(workerID: workerID, factory: factory)
            series.record(figures)
            perWorker[workerID] = series
        }
    }

    /// The registry's page in Prometheus' text format (version 0.0.4).
    var text: String { registry.emitToString() }
}

/// A swift-metrics counter that follows a running total kept elsewhere.
private struct MirroredCounter {
    let counter: CoreMetrics.Counter
    /// The total the counter shows.
    private var shown: UInt64 = 0

    init(_ counter: CoreMetrics.Counter) { self.counter = counter }

    /// Advances the counter to `total`. A total below the last one means its source started over (a
    /// worker registered again): the counter is reset, which Prometheus reads as a counter reset.
    mutating func advance(to total: UInt64) {
        if total < shown {
            counter.reset()
            shown = 0
        }
        if total > shown {
            counter.increment(by: Int64(clamping: total - shown))
            shown = total
        }
    }
}

/// One worker's series, labelled `worker="ID"`.
private struct WorkerSeries {
    let slots: CoreMetrics.Gauge
    let runningTasks: CoreMetrics.Gauge
    var tasksCompleted: MirroredCounter
    var tasksFailed: MirroredCounter

    init(workerID: String, factory: any MetricsFactory) {
        let dimensions = [("worker", workerID)]
        slots = CoreMetrics.Gauge(label: "shiftwork_worker_slots", dimensions: dimensions, factory: factory)
        runningTasks = CoreMetrics.Gauge(
            label: "shiftwork_worker_running_tasks", dimensions: dimensions, factory: factory)
        tasksCompleted = MirroredCounter(
            CoreMetrics.Counter(
                label: "shiftwork_worker_tasks_completed_total", dimensions: dimensions, factory: factory))
        tasksFailed = MirroredCounter(
            CoreMetrics.Counter(label: "shiftwork_worker_tasks_failed_total", dimensions: dimensions, factory: factory))
    }

    mutating func record(_ figures: MetricsReport.WorkerFigures) {
        slots.record(figures.slots)
        runningTasks.record(figures.runningTasks)
        tasksCompleted.advance(to: figures.tasksCompleted)
        tasksFailed.advance(to: figures.tasksFailed)
    }

    func destroy() {
        slots.destroy()
        runningTasks.destroy()
        tasksCompleted.counter.destroy()
        tasksFailed.counter.destroy()
    }
}
