// Messages between a client (`shiftwork submit`, `status`, `cancel`) and the coordinator.

/// One image of a ``SubmitBatch``.
public struct BatchItem: Sendable, Equatable {
    /// The URL (http, https, file) or path of the input image.
    public var source: String
    /// The output's file name without extension (the client adds the extension of the output's format);
    /// the coordinator echoes it in ``ItemFinished``.
    public var outputName: String

    /// Creates an item.
    public init(source: String, outputName: String = "") {
        self.source = source
        self.outputName = outputName
    }
}

/// Sent by a client to the coordinator to submit a batch of images to tilt-shift. The coordinator
/// answers with ``BatchAccepted`` (or a ``Refusal``), then one ``ItemFinished`` per item and a
/// ``BatchFinished``.
public struct SubmitBatch: Sendable, Equatable {
    /// The client's correlation id, echoed in ``BatchAccepted``.
    public var requestID: String
    /// The images, in order; their indexes identify them in later messages.
    public var items: [BatchItem]
    /// The filter's parameters for every item; `nil` when not sent (the coordinator's defaults).
    public var parameters: WireTiltShiftParameters?
    /// What each item is: `.unspecified` for an image (download, then tilt-shift), `.noop` for one
    /// no-op task (benchmarks).
    public var kind: TaskKind
    /// The client understands ``Message/itemsFinished(_:)`` for this batch (minor 1): the coordinator
    /// may then send several finished items in one message.
    public var acceptsBatches: Bool
    /// Where workers write the outputs (minor 3): a directory every worker reaches, or
    /// `s3://BUCKET/PREFIX`; empty: outputs come back through the coordinator.
    public var sink: String = ""
    /// The S3-compatible endpoint for `s3://` sinks and sources (minor 3; empty: AWS).
    public var s3Endpoint: String = ""
    /// Retries of each task after a transient failure (``TaskFailure/isTransient``), 0...10; `nil`: the
    /// coordinator's default.
    public var retries: UInt32?
    /// Seconds after acceptance at which the batch's unfinished items are cancelled; 0: no deadline.
    public var deadlineSeconds: UInt32
    /// The batch's share of the cluster against other waiting batches (``BatchPriority``, -10...10).
    public var priority: Int32 = BatchPriority.normal
    /// A key the client chose (``IdempotencyKey``); empty: none. A submission with a key the coordinator
    /// knows from this client attaches to that batch (``BatchAccepted/attached``) instead of creating one.
    public var idempotencyKey: String = ""

    /// Creates a submission.
    public init(requestID: String, items: [BatchItem], parameters: WireTiltShiftParameters? = nil,
                kind: TaskKind = .unspecified, acceptsBatches: Bool = false, retries: UInt32? = nil,
                deadlineSeconds: UInt32 = 0) {
        self.requestID = requestID
        self.items = items
        self.parameters = parameters
        self.kind = kind
        self.acceptsBatches = acceptsBatches
        self.retries = retries
        self.deadlineSeconds = deadlineSeconds
    }
}

/// Sent by the coordinator to a client in answer to ``SubmitBatch``: the batch is accepted
/// under `batchID`.
public struct BatchAccepted: Sendable, Equatable {
    /// The client's correlation id, from ``SubmitBatch``.
    public var requestID: String
    /// The batch's identity, for `status` and `cancel`.
    public var batchID: String
    /// How many items the batch has.
    public var itemCount: UInt32
    /// The coordinator instance that answered; a client that later sees another one (the coordinator
    /// restarted) re-attaches with ``FetchResults``.
    public var coordinatorID: String
    /// The submission's ``SubmitBatch/idempotencyKey`` named a batch the coordinator knew: the client is
    /// attached to it (its finished items follow, as after ``FetchResults``); no batch was created.
    public var attached = false

    /// Creates an acceptance.
    public init(requestID: String, batchID: String, itemCount: UInt32, coordinatorID: String = "") {
        self.requestID = requestID
        self.batchID = batchID
        self.itemCount = itemCount
        self.coordinatorID = coordinatorID
    }
}

/// Sent by the coordinator to a client for each item of its batch that finishes: the output image,
/// or why there is none.
public struct ItemFinished: Sendable, Equatable {
    /// The batch.
    public var batchID: String
    /// The item's index in ``SubmitBatch/items``.
    public var itemIndex: UInt32
    /// The item's output name, from ``BatchItem/outputName``.
    public var outputName: String
    /// The output or the failure.
    public var outcome: TaskOutcome

    /// Creates a finished item.
    public init(batchID: String, itemIndex: UInt32, outputName: String = "", outcome: TaskOutcome) {
        self.batchID = batchID
        self.itemIndex = itemIndex
        self.outputName = outputName
        self.outcome = outcome
    }
}

/// Sent by the coordinator to a client when a manifest item's download finished and the batch grew
/// by the images it lists: before the manifest item's own ``ItemFinished`` and before any of theirs.
public struct ItemsAdded: Sendable, Equatable {
    /// The batch.
    public var batchID: String
    /// The manifest item.
    public var parentIndex: UInt32
    /// The index of the first new item; the others follow in order.
    public var firstIndex: UInt32
    /// The new items, with the output names the coordinator gave them.
    public var items: [BatchItem]

    /// Creates an announcement of new items.
    public init(batchID: String, parentIndex: UInt32, firstIndex: UInt32, items: [BatchItem]) {
        self.batchID = batchID
        self.parentIndex = parentIndex
        self.firstIndex = firstIndex
        self.items = items
    }
}

/// Sent by the coordinator to a client after the last ``ItemFinished`` of its batch.
public struct BatchFinished: Sendable, Equatable {
    /// The batch.
    public var batchID: String
    /// How many items succeeded.
    public var succeeded: UInt32
    /// How many items failed.
    public var failed: UInt32
    /// How many items were cancelled.
    public var cancelled: UInt32

    /// Creates a batch summary.
    public init(batchID: String, succeeded: UInt32, failed: UInt32 = 0, cancelled: UInt32 = 0) {
        self.batchID = batchID
        self.succeeded = succeeded
        self.failed = failed
        self.cancelled = cancelled
    }
}

/// Sent by a client to the coordinator to ask for the state of the cluster or of one batch; the
/// coordinator answers with ``StatusReply``.
public struct StatusRequest: Sendable, Equatable {
    /// The client's correlation id, echoed in ``StatusReply``.
    public var requestID: String
    /// The batch to report on; empty: the whole cluster.
    public var batchID: String

    /// Creates a status request.
    public init(requestID: String, batchID: String = "") {
        self.requestID = requestID
        self.batchID = batchID
    }
}

/// Sent by a client to the coordinator to (re-)attach to a batch: after the client or the coordinator
/// restarted, or from another process (`shiftwork results`). The coordinator answers with
/// ``BatchAccepted``, an ``ItemFinished`` for every item finished so far, the others as they finish,
/// then ``BatchFinished``; or with a ``Refusal`` when it does not know the batch.
public struct FetchResults: Sendable, Equatable {
    /// The client's correlation id, echoed in ``BatchAccepted`` or ``Refusal``.
    public var requestID: String
    /// The batch.
    public var batchID: String

    /// Creates a fetch request.
    public init(requestID: String, batchID: String) {
        self.requestID = requestID
        self.batchID = batchID
    }
}

/// Sent by a client to the coordinator to cancel a batch, or some of its items. Queued tasks are
/// dropped at once; running ones are stopped with ``CancelTask``. The coordinator answers with
/// ``CancelAccepted`` or a ``Refusal`` carrying `requestID` (minor 2); a request without one (minor 1)
/// gets no answer when it is carried out.
public struct CancelBatch: Sendable, Equatable {
    /// The client's correlation id, echoed in ``CancelAccepted`` or ``Refusal`` (minor 2; empty: none).
    public var requestID: String
    /// The batch.
    public var batchID: String
    /// The items to cancel; empty: every item.
    public var itemIndexes: [UInt32]

    /// Creates a cancellation.
    public init(requestID: String = "", batchID: String, itemIndexes: [UInt32] = []) {
        self.requestID = requestID
        self.batchID = batchID
        self.itemIndexes = itemIndexes
    }
}

/// Sent by the coordinator to a client in answer to a ``CancelBatch`` with a request id (minor 2): the
/// cancel is carried out. The cancelled items' ``ItemFinished`` (with ``FailureCode/cancelled``) follow.
public struct CancelAccepted: Sendable, Equatable {
    /// The client's correlation id, from ``CancelBatch``.
    public var requestID: String
    /// The batch.
    public var batchID: String
    /// How many items were unfinished and are now cancelled (items that had finished keep their outcome).
    public var cancelledItems: UInt32

    /// Creates an acknowledgement.
    public init(requestID: String, batchID: String, cancelledItems: UInt32) {
        self.requestID = requestID
        self.batchID = batchID
        self.cancelledItems = cancelledItems
    }
}

/// Sent in either direction to refuse a request or a peer (for example a worker or client speaking
/// another major version).
public struct Refusal: Sendable, Equatable {
    /// The correlation id of the refused request, if it had one.
    public var requestID: String
    /// What the receiver acts on (minor 2; ``RefusalCode/unspecified`` from a minor-1 peer).
    public var code: RefusalCode
    /// Why, for the user.
    public var reason: String

    /// Creates a refusal.
    public init(requestID: String = "", code: RefusalCode = .unspecified, reason: String) {
        self.requestID = requestID
        self.code = code
        self.reason = reason
    }

    /// What a coordinator answers a worker it does not know (a heartbeat from an identity that has not
    /// said hello); the worker registers again.
    public static let unknownWorker = Refusal(code: .unknownWorker, reason: unknownWorkerReason)

    /// The reason text of ``unknownWorker``. Minor-1 workers recognise the refusal by this text, so it
    /// never changes; a refusal without a code that carries it decodes as ``RefusalCode/unknownWorker``.
    static let unknownWorkerReason = "unknown worker: send hello"

    /// Called by the generated decoder: a minor-1 coordinator sends no code, and its one refusal a worker acts
    /// on is known by its text, so a refusal without a code that carries ``unknownWorkerReason`` is
    /// ``RefusalCode/unknownWorker``.
    mutating func recognizeMinorOneCode() {
        if code == .unspecified, reason == Refusal.unknownWorkerReason {
            code = .unknownWorker
        }
    }
}
