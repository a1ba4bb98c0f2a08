import Wire

extension CoordinatorState {
    /// The answer to `shiftwork status` (the cluster) or `shiftwork status BATCH` (one batch, with items).
    func status(for request: StatusRequest, now: ContinuousClock.Instant) -> StatusReply {
        let workerStatuses = workers.values
            .sorted { $0.workerID < $1.workerID }
            .map { worker in
                let silence = (now - worker.lastSeen).components
                return WorkerStatus(
                    workerID: worker.workerID, hostname: worker.hostname, slots: UInt32(worker.slots),
                    running: UInt32(worker.running.count), completed: worker.completed, failed: worker.failed,
                    lastSeenMsAgo: UInt64(max(0, silence.seconds * 1000 + silence.attoseconds / 1_000_000_000_000_000)))
            }
        let selected: [BatchRecord]
        if request.batchID.isEmpty {
            selected = batches.values.sorted { $0.id < $1.id }
        } else {
            selected = batches[request.batchID].map { [$0] } ?? []
        }
        let batchStatuses = selected.map { batch in
            BatchStatus(
                batchID: batch.id, itemCount: UInt32(batch.items.count), succeeded: batch.count(.succeeded),
                failed: batch.count(.failed), cancelled: batch.count(.cancelled),
                items: request.batchID.isEmpty ? [] : batch.items.enumerated().map { index, item in
                    ItemStatus(itemIndex: UInt32(index), source: item.source, state: item.state.rawValue, error: item.error)
                })
        }
        return StatusReply(
            requestID: request.requestID, workers: workerStatuses, queuedTasks: UInt32(queuedTaskCount),
            runningTasks: UInt32(runningTaskCount), completedTasks: completedTasks, failedTasks: failedTasks,
            batches: batchStatuses, droppedMessages: droppedMessages)
    }
}
