import CShiftworkProto

/// The status reply and its worker, item, attempt and batch records.
extension CMessageBuilder {
    mutating func workerStatus(_ m: WorkerStatus) -> UnsafeMutablePointer<Shiftwork__V1__WorkerStatus> {
        let c = arena.make(Shiftwork__V1__WorkerStatus.self)
        shiftwork__v1__worker_status__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.hostname = string(m.hostname)
        c.pointee.slots = m.slots
        c.pointee.running = m.running
        c.pointee.completed = m.completed
        c.pointee.failed = m.failed
        c.pointee.last_seen_ms_ago = m.lastSeenMsAgo
        c.pointee.dropped_messages = m.droppedMessages
        c.pointee.version = string(m.version)
        return c
    }

    mutating func itemStatus(_ m: ItemStatus) -> UnsafeMutablePointer<Shiftwork__V1__ItemStatus> {
        let c = arena.make(Shiftwork__V1__ItemStatus.self)
        shiftwork__v1__item_status__init(c)
        c.pointee.item_index = m.itemIndex
        c.pointee.source = string(m.source)
        c.pointee.state = string(m.state)
        c.pointee.error = string(m.error)
        (c.pointee.n_warnings, c.pointee.warnings) = strings(m.warnings)
        c.pointee.location = string(m.location)
        c.pointee.attempts = m.attempts
        (c.pointee.n_failed_attempts, c.pointee.failed_attempts) = repeated(m.failedAttempts) { $0.attemptStatus($1) }
        return c
    }

    mutating func attemptStatus(_ m: AttemptStatus) -> UnsafeMutablePointer<Shiftwork__V1__AttemptStatus> {
        let c = arena.make(Shiftwork__V1__AttemptStatus.self)
        shiftwork__v1__attempt_status__init(c)
        c.pointee.task = string(m.task)
        c.pointee.attempt = m.attempt
        c.pointee.code = Shiftwork__V1__FailureCode(rawValue: m.code.rawValue)
        c.pointee.error = string(m.error)
        c.pointee.transient = m.isTransient ? 1 : 0
        c.pointee.retried = m.retried ? 1 : 0
        c.pointee.retry_delay_ms = m.retryDelayMs
        c.pointee.worker = string(m.worker)
        c.pointee.failed_unix_ms = m.failedUnixMilliseconds
        return c
    }

    mutating func batchStatus(_ m: BatchStatus) -> UnsafeMutablePointer<Shiftwork__V1__BatchStatus> {
        let c = arena.make(Shiftwork__V1__BatchStatus.self)
        shiftwork__v1__batch_status__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_count = m.itemCount
        c.pointee.succeeded = m.succeeded
        c.pointee.failed = m.failed
        c.pointee.cancelled = m.cancelled
        (c.pointee.n_items, c.pointee.items) = repeated(m.items) { $0.itemStatus($1) }
        c.pointee.priority = m.priority
        c.pointee.idempotency_key = string(m.idempotencyKey)
        return c
    }

    mutating func statusReply(_ m: StatusReply) -> UnsafeMutablePointer<Shiftwork__V1__StatusReply> {
        let c = arena.make(Shiftwork__V1__StatusReply.self)
        shiftwork__v1__status_reply__init(c)
        c.pointee.request_id = string(m.requestID)
        (c.pointee.n_workers, c.pointee.workers) = repeated(m.workers) { $0.workerStatus($1) }
        c.pointee.queued_tasks = m.queuedTasks
        c.pointee.running_tasks = m.runningTasks
        c.pointee.completed_tasks = m.completedTasks
        c.pointee.failed_tasks = m.failedTasks
        (c.pointee.n_batches, c.pointee.batches) = repeated(m.batches) { $0.batchStatus($1) }
        c.pointee.dropped_messages = m.droppedMessages
        c.pointee.tasks_per_second = m.tasksPerSecond
        c.pointee.coordinator_id = string(m.coordinatorID)
        (c.pointee.n_clients, c.pointee.clients) = repeated(m.clients) { $0.clientStatus($1) }
        c.pointee.max_queued_items_per_client = m.maxQueuedItemsPerClient
        c.pointee.max_batches_per_client = m.maxBatchesPerClient
        return c
    }

    mutating func clientStatus(_ m: ClientStatus) -> UnsafeMutablePointer<Shiftwork__V1__ClientStatus> {
        let c = arena.make(Shiftwork__V1__ClientStatus.self)
        shiftwork__v1__client_status__init(c)
        c.pointee.client = string(m.client)
        c.pointee.queued_items = m.queuedItems
        c.pointee.batches = m.batches
        return c
    }
}
