import CShiftworkProto

/// Builds the protobuf-c struct tree of an `Envelope` from a ``Message``.
///
/// Every struct, string and small array lives in the ``EncodingArena``; `bytes` fields point into the
/// ``PinnedPayloads`` (the Swift arrays' own storage). The tree is valid only inside the scopes that
/// own those two, which is where ``WireCodec`` packs it.
struct CMessageBuilder: ~Copyable {
    var arena: EncodingArena
    private let pinned: PinnedPayloads
    private var nextPinned = 0

    /// Runs `body` with the envelope of `message`, built in scoped memory that is freed afterwards.
    static func withEnvelope<R>(
        of message: Message,
        _ body: (UnsafePointer<Shiftwork__V1__Envelope>) -> R
    ) -> R {
        PinnedPayloads.with(message) { pinned in
            var builder = CMessageBuilder(pinned: pinned)
            let envelope = builder.envelope(message)
            let result = body(envelope)
            builder.end()
            return result
        }
    }

    init(pinned: PinnedPayloads) {
        self.arena = EncodingArena()
        self.pinned = pinned
    }

    /// Ends the builder, and with it the arena: everything the C tree used is freed here, after packing.
    consuming func end() {}

    // MARK: Envelope

    private mutating func envelope(_ message: Message) -> UnsafeMutablePointer<Shiftwork__V1__Envelope> {
        let envelope = arena.make(Shiftwork__V1__Envelope.self)
        shiftwork__v1__envelope__init(envelope)
        envelope.pointee.major = WireProtocol.major
        envelope.pointee.minor = WireProtocol.minor
        switch message {
        case .workerHello(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_WORKER_HELLO
            envelope.pointee.worker_hello = workerHello(m)
        case .heartbeat(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_HEARTBEAT
            envelope.pointee.heartbeat = heartbeat(m)
        case .taskResult(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_RESULT
            envelope.pointee.task_result = taskResult(m)
        case .workerGoodbye(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_WORKER_GOODBYE
            envelope.pointee.worker_goodbye = workerGoodbye(m)
        case .welcome(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_WELCOME
            envelope.pointee.welcome = welcome(m)
        case .taskAssignment(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_ASSIGNMENT
            envelope.pointee.task_assignment = taskAssignment(m)
        case .cancelTask(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_TASK
            envelope.pointee.cancel_task = cancelTask(m)
        case .submitBatch(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_SUBMIT_BATCH
            envelope.pointee.submit_batch = submitBatch(m)
        case .statusRequest(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_STATUS_REQUEST
            envelope.pointee.status_request = statusRequest(m)
        case .cancelBatch(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_BATCH
            envelope.pointee.cancel_batch = cancelBatch(m)
        case .fetchResults(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_FETCH_RESULTS
            envelope.pointee.fetch_results = fetchResults(m)
        case .batchAccepted(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_BATCH_ACCEPTED
            envelope.pointee.batch_accepted = batchAccepted(m)
        case .itemFinished(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_ITEM_FINISHED
            envelope.pointee.item_finished = itemFinished(m)
        case .itemsAdded(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_ITEMS_ADDED
            envelope.pointee.items_added = itemsAdded(m)
        case .batchFinished(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_BATCH_FINISHED
            envelope.pointee.batch_finished = batchFinished(m)
        case .statusReply(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_STATUS_REPLY
            envelope.pointee.status_reply = statusReply(m)
        case .cancelAccepted(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_CANCEL_ACCEPTED
            envelope.pointee.cancel_accepted = cancelAccepted(m)
        case .refusal(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_REFUSAL
            envelope.pointee.refusal = refusal(m)
        case .taskAssignments(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_ASSIGNMENTS
            let c = arena.make(Shiftwork__V1__TaskAssignmentBatch.self)
            shiftwork__v1__task_assignment_batch__init(c)
            let elements = pointers(to: Shiftwork__V1__TaskAssignment.self, count: m.count)
            for (index, element) in m.enumerated() { elements?[index] = taskAssignment(element) }
            c.pointee.n_assignments = m.count
            c.pointee.assignments = elements
            envelope.pointee.task_assignments = c
        case .taskResults(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_RESULTS
            let c = arena.make(Shiftwork__V1__TaskResultBatch.self)
            shiftwork__v1__task_result_batch__init(c)
            let elements = pointers(to: Shiftwork__V1__TaskResult.self, count: m.count)
            for (index, element) in m.enumerated() { elements?[index] = taskResult(element) }
            c.pointee.n_results = m.count
            c.pointee.results = elements
            envelope.pointee.task_results = c
        case .itemsFinished(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_ITEMS_FINISHED
            let c = arena.make(Shiftwork__V1__ItemFinishedBatch.self)
            shiftwork__v1__item_finished_batch__init(c)
            let elements = pointers(to: Shiftwork__V1__ItemFinished.self, count: m.count)
            for (index, element) in m.enumerated() { elements?[index] = itemFinished(element) }
            c.pointee.n_items = m.count
            c.pointee.items = elements
            envelope.pointee.items_finished = c
        }
        return envelope
    }

    // MARK: Fields

    mutating func string(_ value: String) -> UnsafeMutablePointer<CChar> {
        arena.cString(value)
    }

    /// A `bytes` field: the next pinned payload when it is this one, else a copy in the arena.
    mutating func bytes(_ value: [UInt8]) -> ProtobufCBinaryData {
        if nextPinned < pinned.buffers.count {
            let buffer = pinned.buffers[nextPinned]
            nextPinned += 1
            assert(buffer.count == value.count, "payload visited out of order")
            if buffer.count == value.count {
                return ProtobufCBinaryData(len: buffer.count, data: UnsafeMutablePointer(mutating: buffer.baseAddress))
            }
        }
        return ProtobufCBinaryData(len: value.count, data: arena.copy(value))
    }

    /// An array of `count` pointers for a repeated message field.
    /// A repeated `string` field: its count and its array of C strings in the arena.
    private mutating func strings(_ values: [String]) -> (Int, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        let array = pointers(to: CChar.self, count: values.count)
        for (index, value) in values.enumerated() { array?[index] = string(value) }
        return (values.count, array)
    }

    private mutating func pointers<T>(to type: T.Type, count: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<T>?>? {
        count == 0 ? nil : arena.array(of: UnsafeMutablePointer<T>?.self, count: count)
    }

    // MARK: Worker messages

    private mutating func workerHello(_ m: WorkerHello) -> UnsafeMutablePointer<Shiftwork__V1__WorkerHello> {
        let c = arena.make(Shiftwork__V1__WorkerHello.self)
        shiftwork__v1__worker_hello__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.slots = m.slots
        c.pointee.version = string(m.version)
        c.pointee.hostname = string(m.hostname)
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        return c
    }

    private mutating func welcome(_ m: Welcome) -> UnsafeMutablePointer<Shiftwork__V1__Welcome> {
        let c = arena.make(Shiftwork__V1__Welcome.self)
        shiftwork__v1__welcome__init(c)
        c.pointee.heartbeat_interval_ms = m.heartbeatIntervalMs
        c.pointee.coordinator_id = string(m.coordinatorID)
        c.pointee.max_message_bytes = m.maxMessageBytes
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        return c
    }

    private mutating func heartbeat(_ m: Heartbeat) -> UnsafeMutablePointer<Shiftwork__V1__Heartbeat> {
        let c = arena.make(Shiftwork__V1__Heartbeat.self)
        shiftwork__v1__heartbeat__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.running = m.running
        c.pointee.dropped_messages = m.droppedMessages
        c.pointee.last_sequence = m.lastSequence
        c.pointee.n_holding = m.holding.count
        c.pointee.holding = arena.copy(m.holding)
        return c
    }

    private mutating func workerGoodbye(_ m: WorkerGoodbye) -> UnsafeMutablePointer<Shiftwork__V1__WorkerGoodbye> {
        let c = arena.make(Shiftwork__V1__WorkerGoodbye.self)
        shiftwork__v1__worker_goodbye__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.draining = m.draining ? 1 : 0
        return c
    }

    // MARK: Task messages

    private mutating func parameters(_ m: WireTiltShiftParameters) -> UnsafeMutablePointer<Shiftwork__V1__TiltShiftParameters> {
        let c = arena.make(Shiftwork__V1__TiltShiftParameters.self)
        shiftwork__v1__tilt_shift_parameters__init(c)
        c.pointee.focus_position = m.focusPosition
        c.pointee.sharp_band = m.sharpBand
        c.pointee.transition = m.transition
        c.pointee.blur_radius = m.blurRadius
        c.pointee.output_format = Shiftwork__V1__ImageFormat(rawValue: m.outputFormat.rawValue)
        c.pointee.jpeg_quality = m.jpegQuality
        c.pointee.webp_quality = m.webpQuality
        c.pointee.avif_quality = m.avifQuality
        c.pointee.colour_srgb = m.colourSRGB ? 1 : 0
        c.pointee.strip_metadata = m.stripMetadata ? 1 : 0
        return c
    }

    private mutating func injectedInput(_ m: InjectedInput) -> UnsafeMutablePointer<Shiftwork__V1__InjectedInput> {
        let c = arena.make(Shiftwork__V1__InjectedInput.self)
        shiftwork__v1__injected_input__init(c)
        c.pointee.from_task_id = string(m.fromTaskID)
        c.pointee.data = bytes(m.data)
        c.pointee.media_type = string(m.mediaType)
        c.pointee.on_worker = m.onWorker ? 1 : 0
        return c
    }

    private mutating func taskAssignment(_ m: TaskAssignment) -> UnsafeMutablePointer<Shiftwork__V1__TaskAssignment> {
        let c = arena.make(Shiftwork__V1__TaskAssignment.self)
        shiftwork__v1__task_assignment__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.attempt = m.attempt
        c.pointee.kind = Shiftwork__V1__TaskKind(rawValue: m.kind.rawValue)
        c.pointee.source = string(m.source)
        let inputs = pointers(to: Shiftwork__V1__InjectedInput.self, count: m.inputs.count)
        for (index, input) in m.inputs.enumerated() {
            inputs?[index] = injectedInput(input)
        }
        c.pointee.n_inputs = m.inputs.count
        c.pointee.inputs = inputs
        if let parameters = m.parameters {
            c.pointee.parameters = self.parameters(parameters)
        }
        c.pointee.task_key = m.taskKey
        c.pointee.sequence = m.sequence
        c.pointee.keep_output = m.keepOutput ? 1 : 0
        c.pointee.sink = string(m.sink)
        c.pointee.sink_name = string(m.sinkName)
        c.pointee.s3_endpoint = string(m.s3Endpoint)
        return c
    }

    private mutating func taskOutput(_ m: TaskOutput) -> UnsafeMutablePointer<Shiftwork__V1__TaskOutput> {
        let c = arena.make(Shiftwork__V1__TaskOutput.self)
        shiftwork__v1__task_output__init(c)
        c.pointee.data = bytes(m.data)
        c.pointee.media_type = string(m.mediaType)
        c.pointee.width = m.width
        c.pointee.height = m.height
        (c.pointee.n_warnings, c.pointee.warnings) = strings(m.warnings)
        c.pointee.held_on_worker = m.heldOnWorker ? 1 : 0
        c.pointee.location = string(m.location)
        c.pointee.size = m.size
        c.pointee.crc32c = m.crc32c
        return c
    }

    private mutating func taskFailure(_ m: TaskFailure) -> UnsafeMutablePointer<Shiftwork__V1__TaskFailure> {
        let c = arena.make(Shiftwork__V1__TaskFailure.self)
        shiftwork__v1__task_failure__init(c)
        c.pointee.code = Shiftwork__V1__FailureCode(rawValue: m.code.rawValue)
        c.pointee.message = string(m.message)
        c.pointee.transient = m.isTransient ? 1 : 0
        c.pointee.retry_after_ms = m.retryAfterMs
        return c
    }

    private mutating func taskResult(_ m: TaskResult) -> UnsafeMutablePointer<Shiftwork__V1__TaskResult> {
        let c = arena.make(Shiftwork__V1__TaskResult.self)
        shiftwork__v1__task_result__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.attempt = m.attempt
        c.pointee.task_key = m.taskKey
        switch m.outcome {
        case .output(let output):
            c.pointee.outcome_case = SHIFTWORK__V1__TASK_RESULT__OUTCOME_OUTPUT
            c.pointee.output = taskOutput(output)
        case .failure(let failure):
            c.pointee.outcome_case = SHIFTWORK__V1__TASK_RESULT__OUTCOME_FAILURE
            c.pointee.failure = taskFailure(failure)
        }
        return c
    }

    private mutating func cancelTask(_ m: CancelTask) -> UnsafeMutablePointer<Shiftwork__V1__CancelTask> {
        let c = arena.make(Shiftwork__V1__CancelTask.self)
        shiftwork__v1__cancel_task__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.reason = string(m.reason)
        c.pointee.task_key = m.taskKey
        return c
    }

    // MARK: Client messages

    mutating func batchItem(_ m: BatchItem) -> UnsafeMutablePointer<Shiftwork__V1__BatchItem> {
        let c = arena.make(Shiftwork__V1__BatchItem.self)
        shiftwork__v1__batch_item__init(c)
        c.pointee.source = string(m.source)
        c.pointee.output_name = string(m.outputName)
        return c
    }

    mutating func submitBatch(_ m: SubmitBatch) -> UnsafeMutablePointer<Shiftwork__V1__SubmitBatch> {
        let c = arena.make(Shiftwork__V1__SubmitBatch.self)
        shiftwork__v1__submit_batch__init(c)
        c.pointee.request_id = string(m.requestID)
        let items = pointers(to: Shiftwork__V1__BatchItem.self, count: m.items.count)
        for (index, item) in m.items.enumerated() {
            items?[index] = batchItem(item)
        }
        c.pointee.n_items = m.items.count
        c.pointee.items = items
        if let parameters = m.parameters {
            c.pointee.parameters = self.parameters(parameters)
        }
        c.pointee.kind = Shiftwork__V1__TaskKind(rawValue: m.kind.rawValue)
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        c.pointee.sink = string(m.sink)
        c.pointee.s3_endpoint = string(m.s3Endpoint)
        if let retries = m.retries {
            c.pointee.retry_limit_case = SHIFTWORK__V1__SUBMIT_BATCH__RETRY_LIMIT_RETRIES
            c.pointee.retries = retries
        }
        c.pointee.deadline_seconds = m.deadlineSeconds
        c.pointee.priority = m.priority
        c.pointee.idempotency_key = string(m.idempotencyKey)
        return c
    }

    private mutating func batchAccepted(_ m: BatchAccepted) -> UnsafeMutablePointer<Shiftwork__V1__BatchAccepted> {
        let c = arena.make(Shiftwork__V1__BatchAccepted.self)
        shiftwork__v1__batch_accepted__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_count = m.itemCount
        c.pointee.coordinator_id = string(m.coordinatorID)
        c.pointee.attached = m.attached ? 1 : 0
        return c
    }

    private mutating func fetchResults(_ m: FetchResults) -> UnsafeMutablePointer<Shiftwork__V1__FetchResults> {
        let c = arena.make(Shiftwork__V1__FetchResults.self)
        shiftwork__v1__fetch_results__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        return c
    }

    mutating func itemFinished(_ m: ItemFinished) -> UnsafeMutablePointer<Shiftwork__V1__ItemFinished> {
        let c = arena.make(Shiftwork__V1__ItemFinished.self)
        shiftwork__v1__item_finished__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_index = m.itemIndex
        c.pointee.output_name = string(m.outputName)
        switch m.outcome {
        case .output(let output):
            c.pointee.outcome_case = SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_OUTPUT
            c.pointee.output = taskOutput(output)
        case .failure(let failure):
            c.pointee.outcome_case = SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_FAILURE
            c.pointee.failure = taskFailure(failure)
        }
        return c
    }

    mutating func itemsAdded(_ m: ItemsAdded) -> UnsafeMutablePointer<Shiftwork__V1__ItemsAdded> {
        let c = arena.make(Shiftwork__V1__ItemsAdded.self)
        shiftwork__v1__items_added__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.parent_index = m.parentIndex
        c.pointee.first_index = m.firstIndex
        let items = pointers(to: Shiftwork__V1__BatchItem.self, count: m.items.count)
        for (index, item) in m.items.enumerated() {
            items?[index] = batchItem(item)
        }
        c.pointee.n_items = m.items.count
        c.pointee.items = items
        return c
    }

    private mutating func batchFinished(_ m: BatchFinished) -> UnsafeMutablePointer<Shiftwork__V1__BatchFinished> {
        let c = arena.make(Shiftwork__V1__BatchFinished.self)
        shiftwork__v1__batch_finished__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.succeeded = m.succeeded
        c.pointee.failed = m.failed
        c.pointee.cancelled = m.cancelled
        return c
    }

    private mutating func statusRequest(_ m: StatusRequest) -> UnsafeMutablePointer<Shiftwork__V1__StatusRequest> {
        let c = arena.make(Shiftwork__V1__StatusRequest.self)
        shiftwork__v1__status_request__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        return c
    }

    mutating func cancelBatch(_ m: CancelBatch) -> UnsafeMutablePointer<Shiftwork__V1__CancelBatch> {
        let c = arena.make(Shiftwork__V1__CancelBatch.self)
        shiftwork__v1__cancel_batch__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.n_item_indexes = m.itemIndexes.count
        c.pointee.item_indexes = arena.copy(m.itemIndexes)
        c.pointee.request_id = string(m.requestID)
        return c
    }

    private mutating func cancelAccepted(_ m: CancelAccepted) -> UnsafeMutablePointer<Shiftwork__V1__CancelAccepted> {
        let c = arena.make(Shiftwork__V1__CancelAccepted.self)
        shiftwork__v1__cancel_accepted__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.cancelled_items = m.cancelledItems
        return c
    }

    private mutating func refusal(_ m: Refusal) -> UnsafeMutablePointer<Shiftwork__V1__Refusal> {
        let c = arena.make(Shiftwork__V1__Refusal.self)
        shiftwork__v1__refusal__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.reason = string(m.reason)
        c.pointee.code = Shiftwork__V1__RefusalCode(rawValue: m.code.rawValue)
        return c
    }

    // MARK: Status

    private mutating func workerStatus(_ m: WorkerStatus) -> UnsafeMutablePointer<Shiftwork__V1__WorkerStatus> {
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

    private mutating func itemStatus(_ m: ItemStatus) -> UnsafeMutablePointer<Shiftwork__V1__ItemStatus> {
        let c = arena.make(Shiftwork__V1__ItemStatus.self)
        shiftwork__v1__item_status__init(c)
        c.pointee.item_index = m.itemIndex
        c.pointee.source = string(m.source)
        c.pointee.state = string(m.state)
        c.pointee.error = string(m.error)
        (c.pointee.n_warnings, c.pointee.warnings) = strings(m.warnings)
        c.pointee.location = string(m.location)
        c.pointee.attempts = m.attempts
        let attempts = pointers(to: Shiftwork__V1__AttemptStatus.self, count: m.failedAttempts.count)
        for (index, attempt) in m.failedAttempts.enumerated() {
            attempts?[index] = attemptStatus(attempt)
        }
        c.pointee.n_failed_attempts = m.failedAttempts.count
        c.pointee.failed_attempts = attempts
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

    private mutating func batchStatus(_ m: BatchStatus) -> UnsafeMutablePointer<Shiftwork__V1__BatchStatus> {
        let c = arena.make(Shiftwork__V1__BatchStatus.self)
        shiftwork__v1__batch_status__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_count = m.itemCount
        c.pointee.succeeded = m.succeeded
        c.pointee.failed = m.failed
        c.pointee.cancelled = m.cancelled
        let items = pointers(to: Shiftwork__V1__ItemStatus.self, count: m.items.count)
        for (index, item) in m.items.enumerated() {
            items?[index] = itemStatus(item)
        }
        c.pointee.n_items = m.items.count
        c.pointee.items = items
        c.pointee.priority = m.priority
        c.pointee.idempotency_key = string(m.idempotencyKey)
        return c
    }

    private mutating func statusReply(_ m: StatusReply) -> UnsafeMutablePointer<Shiftwork__V1__StatusReply> {
        let c = arena.make(Shiftwork__V1__StatusReply.self)
        shiftwork__v1__status_reply__init(c)
        c.pointee.request_id = string(m.requestID)
        let workers = pointers(to: Shiftwork__V1__WorkerStatus.self, count: m.workers.count)
        for (index, worker) in m.workers.enumerated() {
            workers?[index] = workerStatus(worker)
        }
        c.pointee.n_workers = m.workers.count
        c.pointee.workers = workers
        c.pointee.queued_tasks = m.queuedTasks
        c.pointee.running_tasks = m.runningTasks
        c.pointee.completed_tasks = m.completedTasks
        c.pointee.failed_tasks = m.failedTasks
        let batches = pointers(to: Shiftwork__V1__BatchStatus.self, count: m.batches.count)
        for (index, batch) in m.batches.enumerated() {
            batches?[index] = batchStatus(batch)
        }
        c.pointee.n_batches = m.batches.count
        c.pointee.batches = batches
        c.pointee.dropped_messages = m.droppedMessages
        c.pointee.tasks_per_second = m.tasksPerSecond
        c.pointee.coordinator_id = string(m.coordinatorID)
        return c
    }
}
