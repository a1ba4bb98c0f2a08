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
        case .giveBackTask(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_GIVE_BACK_TASK
            envelope.pointee.give_back_task = giveBackTask(m)
        case .taskGivenBack(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_GIVEN_BACK
            envelope.pointee.task_given_back = taskGivenBack(m)
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
        case .retryBatch(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_RETRY_BATCH
            envelope.pointee.retry_batch = retryBatch(m)
        case .retryAccepted(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_RETRY_ACCEPTED
            envelope.pointee.retry_accepted = retryAccepted(m)
        case .refusal(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_REFUSAL
            envelope.pointee.refusal = refusal(m)
        case .taskAssignments(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_ASSIGNMENTS
            let c = arena.make(Shiftwork__V1__TaskAssignmentBatch.self)
            shiftwork__v1__task_assignment_batch__init(c)
            (c.pointee.n_assignments, c.pointee.assignments) = repeated(m) { $0.taskAssignment($1) }
            envelope.pointee.task_assignments = c
        case .taskResults(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_TASK_RESULTS
            let c = arena.make(Shiftwork__V1__TaskResultBatch.self)
            shiftwork__v1__task_result_batch__init(c)
            (c.pointee.n_results, c.pointee.results) = repeated(m) { $0.taskResult($1) }
            envelope.pointee.task_results = c
        case .itemsFinished(let m):
            envelope.pointee.body_case = SHIFTWORK__V1__ENVELOPE__BODY_ITEMS_FINISHED
            let c = arena.make(Shiftwork__V1__ItemFinishedBatch.self)
            shiftwork__v1__item_finished_batch__init(c)
            (c.pointee.n_items, c.pointee.items) = repeated(m) { $0.itemFinished($1) }
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

    /// A repeated `string` field: its count and its array of C strings in the arena.
    mutating func strings(_ values: [String]) -> (Int, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        repeated(values) { builder, value in builder.string(value) }
    }

    /// A repeated message field: its count and its array of pointers to the messages `make` builds, in the arena.
    mutating func repeated<Element, Message>(
        _ values: [Element], _ make: (inout CMessageBuilder, Element) -> UnsafeMutablePointer<Message>
    ) -> (Int, UnsafeMutablePointer<UnsafeMutablePointer<Message>?>?) {
        let array = pointers(to: Message.self, count: values.count)
        for (index, value) in values.enumerated() { array?[index] = make(&self, value) }
        return (values.count, array)
    }

    /// An array of `count` pointers for a repeated message field.
    mutating func pointers<T>(to type: T.Type, count: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<T>?>? {
        count == 0 ? nil : arena.array(of: UnsafeMutablePointer<T>?.self, count: count)
    }
}
