import CShiftworkProto

// Conversions from unpacked protobuf-c structs to the Swift value types. They only read: the caller
// owns the unpacked tree and frees it afterwards.

extension Message {
    /// The message in an unpacked envelope whose major version has been checked.
    init(envelope e: Shiftwork__V1__Envelope) throws(WireError) {
        switch e.body_case {
        case SHIFTWORK__V1__ENVELOPE__BODY_WORKER_HELLO:
            self = .workerHello(try WorkerHello(try required(e.worker_hello, "Envelope.worker_hello").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_HEARTBEAT:
            self = .heartbeat(try Heartbeat(try required(e.heartbeat, "Envelope.heartbeat").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_TASK_RESULT:
            self = .taskResult(try TaskResult(try required(e.task_result, "Envelope.task_result").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_WORKER_GOODBYE:
            self = .workerGoodbye(try WorkerGoodbye(try required(e.worker_goodbye, "Envelope.worker_goodbye").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_WELCOME:
            self = .welcome(try Welcome(try required(e.welcome, "Envelope.welcome").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_TASK_ASSIGNMENT:
            self = .taskAssignment(try TaskAssignment(try required(e.task_assignment, "Envelope.task_assignment").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_TASK:
            self = .cancelTask(try CancelTask(try required(e.cancel_task, "Envelope.cancel_task").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_GIVE_BACK_TASK:
            let c = try required(e.give_back_task, "Envelope.give_back_task").pointee
            self = .giveBackTask(GiveBackTask(taskKey: c.task_key, attempt: c.attempt))
        case SHIFTWORK__V1__ENVELOPE__BODY_TASK_GIVEN_BACK:
            let c = try required(e.task_given_back, "Envelope.task_given_back").pointee
            self = .taskGivenBack(TaskGivenBack(taskKey: c.task_key, attempt: c.attempt, givenBack: c.given_back != 0))
        case SHIFTWORK__V1__ENVELOPE__BODY_SUBMIT_BATCH:
            self = .submitBatch(try SubmitBatch(try required(e.submit_batch, "Envelope.submit_batch").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_STATUS_REQUEST:
            self = .statusRequest(try StatusRequest(try required(e.status_request, "Envelope.status_request").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_BATCH:
            self = .cancelBatch(try CancelBatch(try required(e.cancel_batch, "Envelope.cancel_batch").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_FETCH_RESULTS:
            self = .fetchResults(try FetchResults(try required(e.fetch_results, "Envelope.fetch_results").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_BATCH_ACCEPTED:
            self = .batchAccepted(try BatchAccepted(try required(e.batch_accepted, "Envelope.batch_accepted").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_ITEM_FINISHED:
            self = .itemFinished(try ItemFinished(try required(e.item_finished, "Envelope.item_finished").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_ITEMS_ADDED:
            self = .itemsAdded(try ItemsAdded(try required(e.items_added, "Envelope.items_added").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_BATCH_FINISHED:
            self = .batchFinished(try BatchFinished(try required(e.batch_finished, "Envelope.batch_finished").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_STATUS_REPLY:
            self = .statusReply(try StatusReply(try required(e.status_reply, "Envelope.status_reply").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_ACCEPTED:
            self = .cancelAccepted(try CancelAccepted(try required(e.cancel_accepted, "Envelope.cancel_accepted").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_RETRY_BATCH:
            self = .retryBatch(try RetryBatch(try required(e.retry_batch, "Envelope.retry_batch").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_RETRY_ACCEPTED:
            self = .retryAccepted(try RetryAccepted(try required(e.retry_accepted, "Envelope.retry_accepted").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_REFUSAL:
            self = .refusal(try Refusal(try required(e.refusal, "Envelope.refusal").pointee))
        case SHIFTWORK__V1__ENVELOPE__BODY_TASK_ASSIGNMENTS:
            let c = try required(e.task_assignments, "Envelope.task_assignments").pointee
            self = .taskAssignments(try readRepeated(c.n_assignments, c.assignments, field: "TaskAssignmentBatch.assignments") {
                (a) throws(WireError) in try TaskAssignment(a.pointee)
            })
        case SHIFTWORK__V1__ENVELOPE__BODY_TASK_RESULTS:
            let c = try required(e.task_results, "Envelope.task_results").pointee
            self = .taskResults(try readRepeated(c.n_results, c.results, field: "TaskResultBatch.results") {
                (r) throws(WireError) in try TaskResult(r.pointee)
            })
        case SHIFTWORK__V1__ENVELOPE__BODY_ITEMS_FINISHED:
            let c = try required(e.items_finished, "Envelope.items_finished").pointee
            self = .itemsFinished(try readRepeated(c.n_items, c.items, field: "ItemFinishedBatch.items") {
                (i) throws(WireError) in try ItemFinished(i.pointee)
            })
        default:
            // Not set, or a body field of a newer minor version (kept by protobuf-c as unknown).
            throw .missingBody
        }
    }
}

// MARK: Enumerations

extension TaskKind {
    init(_ c: Shiftwork__V1__TaskKind, field: String) throws(WireError) {
        guard let kind = TaskKind(rawValue: c.rawValue) else {
            throw .invalidField("\(field): unknown task kind \(c.rawValue)")
        }
        self = kind
    }
}

extension WireImageFormat {
    init(_ c: Shiftwork__V1__ImageFormat, field: String) throws(WireError) {
        guard let format = WireImageFormat(rawValue: c.rawValue) else {
            throw .invalidField("\(field): unknown image format \(c.rawValue)")
        }
        self = format
    }
}

extension FailureCode {
    /// Unknown codes (from a newer peer) read as ``FailureCode/unspecified``: the failure itself still counts.
    init(_ c: Shiftwork__V1__FailureCode) {
        self = FailureCode(rawValue: c.rawValue) ?? .unspecified
    }
}

extension RefusalCode {
    /// Unknown codes (from a newer peer) read as ``RefusalCode/unspecified``: the refusal itself still counts.
    init(_ c: Shiftwork__V1__RefusalCode) {
        self = RefusalCode(rawValue: c.rawValue) ?? .unspecified
    }
}

// MARK: Worker messages

extension WorkerHello {
    init(_ c: Shiftwork__V1__WorkerHello) throws(WireError) {
        self.init(
            workerID: try readString(c.worker_id), slots: c.slots,
            version: try readString(c.version), hostname: try readString(c.hostname), acceptsBatches: c.accepts_batches != 0)
        acceptsChainedTasks = c.accepts_chained_tasks != 0
        giveBackThreads = c.give_back_threads
    }
}

extension Welcome {
    init(_ c: Shiftwork__V1__Welcome) throws(WireError) {
        self.init(
            heartbeatIntervalMs: c.heartbeat_interval_ms, coordinatorID: try readString(c.coordinator_id),
            acceptsBatches: c.accepts_batches != 0, maxMessageBytes: c.max_message_bytes)
    }
}

extension Heartbeat {
    init(_ c: Shiftwork__V1__Heartbeat) throws(WireError) {
        self.init(workerID: try readString(c.worker_id), running: c.running, droppedMessages: c.dropped_messages,
                  lastSequence: c.last_sequence,
                  holding: c.n_holding > 0 && c.holding != nil ? Array(UnsafeBufferPointer(start: c.holding, count: c.n_holding)) : [])
    }
}

extension WorkerGoodbye {
    init(_ c: Shiftwork__V1__WorkerGoodbye) throws(WireError) {
        self.init(workerID: try readString(c.worker_id), draining: c.draining != 0)
    }
}

// MARK: Task messages

extension WireTiltShiftParameters {
    init(_ c: Shiftwork__V1__TiltShiftParameters, field: String) throws(WireError) {
        self.init(
            focusPosition: c.focus_position, sharpBand: c.sharp_band, transition: c.transition,
            blurRadius: c.blur_radius,
            outputFormat: try WireImageFormat(c.output_format, field: "\(field).output_format"),
            jpegQuality: c.jpeg_quality, webpQuality: c.webp_quality, avifQuality: c.avif_quality,
            colourSRGB: c.colour_srgb != 0, stripMetadata: c.strip_metadata != 0,
            angle: c.angle, falloff: try WireFalloff(c.falloff, field: "\(field).falloff"))
    }
}

extension WireFalloff {
    init(_ c: Shiftwork__V1__Falloff, field: String) throws(WireError) {
        guard let falloff = WireFalloff(rawValue: c.rawValue) else {
            throw .invalidField("\(field): unknown falloff \(c.rawValue)")
        }
        self = falloff
    }
}

extension InjectedInput {
    init(_ c: Shiftwork__V1__InjectedInput) throws(WireError) {
        self.init(fromTaskID: try readString(c.from_task_id), data: readBytes(c.data), mediaType: try readString(c.media_type),
                  onWorker: c.on_worker != 0)
    }
}

extension TaskAssignment {
    init(_ c: Shiftwork__V1__TaskAssignment) throws(WireError) {
        self.init(
            taskID: try readString(c.task_id),
            batchID: try readString(c.batch_id),
            attempt: c.attempt,
            kind: TaskKind(rawValue: c.kind.rawValue) ?? .unspecified,
            source: try readString(c.source),
            inputs: try readRepeated(c.n_inputs, c.inputs, field: "TaskAssignment.inputs") { (element) throws(WireError) in try InjectedInput(element.pointee) },
            taskKey: c.task_key, sequence: c.sequence)
        // A value this version cannot act on (an unknown image format) does not make the assignment unreadable:
        // its task is known, and the worker answers it with a failure naming the field (`unreadableField`).
        do {
            parameters = try c.parameters.map { (p) throws(WireError) in
                try WireTiltShiftParameters(p.pointee, field: "TaskAssignment.parameters")
            }
        } catch {
            guard case .invalidField(let detail) = error else { throw error }
            unreadableField = detail
        }
        keepOutput = c.keep_output != 0
        sink = try readString(c.sink)
        sinkName = try readString(c.sink_name)
        s3Endpoint = try readString(c.s3_endpoint)
        do {
            followOn = try c.follow_on.map { (f) throws(WireError) in try ChainedTask(f.pointee) }
        } catch {
            guard case .invalidField(let detail) = error else { throw error }
            unreadableField = unreadableField ?? detail
        }
    }
}

extension ChainedTask {
    init(_ c: Shiftwork__V1__ChainedTask) throws(WireError) {
        self.init(
            taskID: try readString(c.task_id), attempt: c.attempt, taskKey: c.task_key,
            parameters: try c.parameters.map { (p) throws(WireError) in
                try WireTiltShiftParameters(p.pointee, field: "ChainedTask.parameters")
            },
            sink: try readString(c.sink), sinkName: try readString(c.sink_name))
    }
}

extension TaskOutput {
    init(_ c: Shiftwork__V1__TaskOutput) throws(WireError) {
        self.init(data: readBytes(c.data), mediaType: try readString(c.media_type), width: c.width, height: c.height,
                  warnings: try readStrings(c.n_warnings, c.warnings, field: "TaskOutput.warnings"))
        heldOnWorker = c.held_on_worker != 0
        location = try readString(c.location)
        size = c.size
        crc32c = c.crc32c
    }
}

extension TaskFailure {
    init(_ c: Shiftwork__V1__TaskFailure) throws(WireError) {
        self.init(code: FailureCode(c.code), message: try readString(c.message), isTransient: c.transient != 0,
                  retryAfterMs: c.retry_after_ms)
    }
}

extension TaskOutcome {
    /// The outcome of a `oneof outcome` whose case number is `output` or `failure`; else `invalidField`.
    init(
        isOutput: Bool, isFailure: Bool,
        output: UnsafeMutablePointer<Shiftwork__V1__TaskOutput>?,
        failure: UnsafeMutablePointer<Shiftwork__V1__TaskFailure>?,
        field: String
    ) throws(WireError) {
        if isOutput {
            self = .output(try TaskOutput(try required(output, "\(field).output").pointee))
        } else if isFailure {
            self = .failure(try TaskFailure(try required(failure, "\(field).failure").pointee))
        } else {
            throw .invalidField("\(field) is not set")
        }
    }
}

extension TaskResult {
    init(_ c: Shiftwork__V1__TaskResult) throws(WireError) {
        self.init(
            taskID: try readString(c.task_id),
            attempt: c.attempt,
            outcome: try TaskOutcome(
                isOutput: c.outcome_case == SHIFTWORK__V1__TASK_RESULT__OUTCOME_OUTPUT,
                isFailure: c.outcome_case == SHIFTWORK__V1__TASK_RESULT__OUTCOME_FAILURE,
                output: c.output, failure: c.failure, field: "TaskResult.outcome"),
            taskKey: c.task_key)
    }
}

extension CancelTask {
    init(_ c: Shiftwork__V1__CancelTask) throws(WireError) {
        self.init(taskID: try readString(c.task_id), reason: try readString(c.reason), taskKey: c.task_key)
    }
}

// MARK: Client messages

extension BatchItem {
    init(_ c: Shiftwork__V1__BatchItem) throws(WireError) {
        self.init(source: try readString(c.source), outputName: try readString(c.output_name))
    }
}

extension SubmitBatch {
    init(_ c: Shiftwork__V1__SubmitBatch) throws(WireError) {
        self.init(
            requestID: try readString(c.request_id),
            items: try readRepeated(c.n_items, c.items, field: "SubmitBatch.items") { (element) throws(WireError) in try BatchItem(element.pointee) },
            parameters: try c.parameters.map { (p) throws(WireError) in
                try WireTiltShiftParameters(p.pointee, field: "SubmitBatch.parameters")
            },
            kind: try TaskKind(c.kind, field: "SubmitBatch.kind"),
            acceptsBatches: c.accepts_batches != 0,
            retries: c.retry_limit_case == SHIFTWORK__V1__SUBMIT_BATCH__RETRY_LIMIT_RETRIES ? c.retries : nil,
            deadlineSeconds: c.deadline_seconds)
        sink = try readString(c.sink)
        s3Endpoint = try readString(c.s3_endpoint)
        priority = c.priority
        idempotencyKey = try readString(c.idempotency_key)
    }
}

extension BatchAccepted {
    init(_ c: Shiftwork__V1__BatchAccepted) throws(WireError) {
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id), itemCount: c.item_count,
                  coordinatorID: try readString(c.coordinator_id))
        attached = c.attached != 0
    }
}

extension FetchResults {
    init(_ c: Shiftwork__V1__FetchResults) throws(WireError) {
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id))
    }
}

extension ItemFinished {
    init(_ c: Shiftwork__V1__ItemFinished) throws(WireError) {
        self.init(
            batchID: try readString(c.batch_id),
            itemIndex: c.item_index,
            outputName: try readString(c.output_name),
            outcome: try TaskOutcome(
                isOutput: c.outcome_case == SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_OUTPUT,
                isFailure: c.outcome_case == SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_FAILURE,
                output: c.output, failure: c.failure, field: "ItemFinished.outcome"))
    }
}

extension ItemsAdded {
    init(_ c: Shiftwork__V1__ItemsAdded) throws(WireError) {
        self.init(
            batchID: try readString(c.batch_id), parentIndex: c.parent_index, firstIndex: c.first_index,
            items: try readRepeated(c.n_items, c.items, field: "ItemsAdded.items") { (element) throws(WireError) in try BatchItem(element.pointee) })
    }
}

extension BatchFinished {
    init(_ c: Shiftwork__V1__BatchFinished) throws(WireError) {
        self.init(batchID: try readString(c.batch_id), succeeded: c.succeeded, failed: c.failed, cancelled: c.cancelled)
    }
}

extension StatusRequest {
    init(_ c: Shiftwork__V1__StatusRequest) throws(WireError) {
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id))
    }
}

extension CancelBatch {
    init(_ c: Shiftwork__V1__CancelBatch) throws(WireError) {
        let indexes = readUInt32s(c.n_item_indexes, c.item_indexes)
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id), itemIndexes: indexes)
    }
}

extension CancelAccepted {
    init(_ c: Shiftwork__V1__CancelAccepted) throws(WireError) {
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id), cancelledItems: c.cancelled_items)
    }
}

extension RetryBatch {
    init(_ c: Shiftwork__V1__RetryBatch) throws(WireError) {
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id),
                  items: try readStrings(c.n_items, c.items, field: "RetryBatch.items"), acceptsBatches: c.accepts_batches != 0)
    }
}

extension RetryAccepted {
    init(_ c: Shiftwork__V1__RetryAccepted) throws(WireError) {
        let indexes = readUInt32s(c.n_item_indexes, c.item_indexes)
        self.init(requestID: try readString(c.request_id), batchID: try readString(c.batch_id), itemIndexes: indexes,
                  itemCount: c.item_count, coordinatorID: try readString(c.coordinator_id))
    }
}

extension Refusal {
    init(_ c: Shiftwork__V1__Refusal) throws(WireError) {
        let reason = try readString(c.reason)
        var code = RefusalCode(c.code)
        if code == .unspecified, reason == Refusal.unknownWorkerReason {
            // A minor-1 coordinator sends no code: its one refusal a worker acts on is known by its text.
            code = .unknownWorker
        }
        self.init(requestID: try readString(c.request_id), code: code, reason: reason)
    }
}

// MARK: Status

extension WorkerStatus {
    init(_ c: Shiftwork__V1__WorkerStatus) throws(WireError) {
        self.init(
            workerID: try readString(c.worker_id), hostname: try readString(c.hostname), slots: c.slots,
            running: c.running, completed: c.completed, failed: c.failed, lastSeenMsAgo: c.last_seen_ms_ago,
            droppedMessages: c.dropped_messages, version: try readString(c.version))
    }
}

extension ItemStatus {
    init(_ c: Shiftwork__V1__ItemStatus) throws(WireError) {
        self.init(
            itemIndex: c.item_index, source: try readString(c.source), state: try readString(c.state),
            error: try readString(c.error),
            warnings: try readStrings(c.n_warnings, c.warnings, field: "ItemStatus.warnings"),
            location: try readString(c.location), attempts: c.attempts,
            failedAttempts: try readRepeated(c.n_failed_attempts, c.failed_attempts, field: "ItemStatus.failed_attempts") {
                (element) throws(WireError) in try AttemptStatus(element.pointee)
            })
    }
}

extension AttemptStatus {
    init(_ c: Shiftwork__V1__AttemptStatus) throws(WireError) {
        self.init(
            task: try readString(c.task), attempt: c.attempt, code: FailureCode(c.code), error: try readString(c.error),
            isTransient: c.transient != 0, retried: c.retried != 0, retryDelayMs: c.retry_delay_ms,
            worker: try readString(c.worker), failedUnixMilliseconds: c.failed_unix_ms)
    }
}

extension BatchStatus {
    init(_ c: Shiftwork__V1__BatchStatus) throws(WireError) {
        self.init(
            batchID: try readString(c.batch_id), itemCount: c.item_count, succeeded: c.succeeded,
            failed: c.failed, cancelled: c.cancelled,
            items: try readRepeated(c.n_items, c.items, field: "BatchStatus.items") { (element) throws(WireError) in try ItemStatus(element.pointee) })
        priority = c.priority
        idempotencyKey = try readString(c.idempotency_key)
    }
}

extension StatusReply {
    init(_ c: Shiftwork__V1__StatusReply) throws(WireError) {
        self.init(
            requestID: try readString(c.request_id),
            workers: try readRepeated(c.n_workers, c.workers, field: "StatusReply.workers") { (element) throws(WireError) in try WorkerStatus(element.pointee) },
            queuedTasks: c.queued_tasks,
            runningTasks: c.running_tasks,
            completedTasks: c.completed_tasks,
            failedTasks: c.failed_tasks,
            batches: try readRepeated(c.n_batches, c.batches, field: "StatusReply.batches") {
                (b) throws(WireError) in try BatchStatus(b.pointee)
            },
            droppedMessages: c.dropped_messages,
            tasksPerSecond: c.tasks_per_second.isFinite ? c.tasks_per_second : 0,
            coordinatorID: try readString(c.coordinator_id))
        clients = try readRepeated(c.n_clients, c.clients, field: "StatusReply.clients") { (element) throws(WireError) in
            ClientStatus(client: try readString(element.pointee.client), queuedItems: element.pointee.queued_items,
                         batches: element.pointee.batches)
        }
        maxQueuedItemsPerClient = c.max_queued_items_per_client
        maxBatchesPerClient = c.max_batches_per_client
    }
}
