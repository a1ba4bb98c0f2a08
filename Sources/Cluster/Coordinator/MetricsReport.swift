/// The coordinator's counters and gauges in Prometheus' text format, for `MetricsServer`
/// (`--metrics-listen`), read from the dispatcher, the batch registry and the coordinator's own counts.
struct MetricsReport {
    /// The page.
    let text: String

    /// The report of `coordinator` as it stands.
    init(coordinator: isolated Coordinator, now: ContinuousClock.Instant) {
        self.init(dispatcher: coordinator.dispatcher, registry: coordinator.registry,
                  queuedTasks: coordinator.queuedTaskCount, droppedMessages: coordinator.droppedMessages,
                  peersRefused: coordinator.authenticationRefusalsIfAuthenticating, now: now)
    }

    init(dispatcher: Dispatcher, registry: BatchRegistry, queuedTasks: Int, droppedMessages: UInt64,
         peersRefused: Int?, now: ContinuousClock.Instant) {
        let workers = dispatcher.workers.values.sorted { $0.workerID < $1.workerID }
        var page = PrometheusText()
        page.single("shiftwork_workers", "gauge", "Workers connected to the coordinator.", Double(workers.count))
        page.family("shiftwork_worker_slots", "gauge", "Tasks a worker runs at once.",
                    workers.map { ([("worker", $0.workerID)], Double($0.slots)) })
        page.family("shiftwork_worker_running_tasks", "gauge", "Tasks a worker holds now (its load).",
                    workers.map { ([("worker", $0.workerID)], Double($0.running.count)) })
        page.family("shiftwork_worker_tasks_completed_total", "counter", "Tasks a worker completed.",
                    workers.map { ([("worker", $0.workerID)], Double($0.completed)) })
        page.family("shiftwork_worker_tasks_failed_total", "counter", "Tasks that failed on a worker.",
                    workers.map { ([("worker", $0.workerID)], Double($0.failed)) })
        page.single("shiftwork_tasks_queued", "gauge", "Tasks accepted and not started: the queue depth.",
                    Double(queuedTasks))
        page.single("shiftwork_tasks_running", "gauge", "Tasks sent to workers and not answered yet.",
                    Double(dispatcher.runningTaskCount))
        page.single("shiftwork_tasks_completed_total", "counter", "Tasks completed.", Double(dispatcher.completedTasks))
        page.single("shiftwork_tasks_failed_total", "counter", "Tasks failed.", Double(dispatcher.failedTasks))
        page.single("shiftwork_tasks_per_second", "gauge", "Tasks finished per second over the last 10 seconds.",
                    dispatcher.tasksPerSecond(now: now))
        page.single("shiftwork_batches_accepted_total", "counter", "Batches accepted.", Double(registry.batchesAccepted))
        page.single("shiftwork_batches_running", "gauge", "Batches with unfinished items.", Double(registry.runningBatchCount))
        page.single("shiftwork_tasks_local_input_total", "counter",
                    "Tasks sent to the worker that already held their input (it did not travel).",
                    Double(dispatcher.localInputs))
        page.single("shiftwork_tasks_local_input_missed_total", "counter",
                    "Of those, tasks whose input the worker no longer had, sent again with the bytes.",
                    Double(dispatcher.localInputsMissed))
        page.single("shiftwork_assignments_lost_total", "counter",
                    "Assignments a worker did not receive whole (found through its heartbeats) and queued again.",
                    Double(dispatcher.lostDeliveries))
        page.single("shiftwork_messages_dropped_total", "counter",
                    "Messages dropped: malformed, from the wrong kind of peer, or answering an attempt that is no longer current.",
                    Double(droppedMessages + dispatcher.staleResults))
        if let peersRefused {
            page.single("shiftwork_peers_refused_total", "counter",
                        "Connections refused by CurveZMQ authentication (public key not on the allow-list).",
                        Double(peersRefused))
        }
        text = page.text
    }
}
