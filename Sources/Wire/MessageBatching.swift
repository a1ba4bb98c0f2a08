/// Groups messages for one peer into the batch messages of minor version 1, and takes them apart again.
///
/// Only consecutive messages of one kind are grouped (`TaskAssignment`s into a `TaskAssignmentBatch`,
/// `TaskResult`s into a `TaskResultBatch`, `ItemFinished`s into an `ItemFinishedBatch`), so the order
/// in which a receiver handles them is unchanged. A group holds at most ``Limits/maxCount`` elements and
/// at most ``Limits/maxPayloadBytes`` of image payload (a larger payload travels in a message of its
/// own, so that a batch never comes near the frame size limit). A group of one is sent as the plain
/// message, which every peer understands.
public enum MessageBatching {
    /// How large a batch message may grow.
    public struct Limits: Sendable, Equatable {
        /// Elements per batch message.
        public var maxCount: Int
        /// Bytes of `data` (images) per batch message.
        public var maxPayloadBytes: Int

        /// Creates limits.
        public init(maxCount: Int = 512, maxPayloadBytes: Int = 1 << 20) {
            self.maxCount = max(1, maxCount)
            self.maxPayloadBytes = max(0, maxPayloadBytes)
        }
    }

    /// `messages` with runs of batchable messages of one kind grouped, in order.
    public static func coalesce(_ messages: [Message], limits: Limits = Limits()) -> [Message] {
        guard messages.count > 1 else { return messages }
        var grouping = Grouping(limits: limits)
        for message in messages { grouping.add(message) }
        return grouping.finish()
    }

    /// The plain messages a (possibly batch) message stands for, in order.
    public static func unbatched(_ message: Message) -> [Message] {
        switch message {
        case .taskAssignments(let elements): elements.map(Message.taskAssignment)
        case .taskResults(let elements): elements.map(Message.taskResult)
        case .itemsFinished(let elements): elements.map(Message.itemFinished)
        default: [message]
        }
    }

    /// Groups messages for one peer as they are added, into `messages`: what ``coalesce(_:limits:)``
    /// does, for a caller that has its messages one by one (the coordinator, per peer of a wake-up),
    /// without gathering them in an array first. Each batchable message is copied once, into the typed
    /// array of its batch message.
    public struct Grouping {
        /// The messages grouped so far (the run being gathered is added by ``close()`` or ``finish()``).
        public private(set) var messages: [Message] = []
        private let limits: Limits
        private var assignments: [TaskAssignment] = []
        private var results: [TaskResult] = []
        private var items: [ItemFinished] = []
        /// How many elements the run being gathered has, and of which kind.
        private var count = 0
        private var kind = Kind.assignment
        private var payloadBytes = 0

        private enum Kind { case assignment, result, item }

        /// An empty grouping.
        public init(limits: Limits = Limits()) {
            self.limits = limits
        }

        /// Adds a message: a batchable one joins the run of its kind (or starts one), another ends the
        /// run and follows it.
        public mutating func add(_ message: Message) {
            switch message {
            case .taskAssignment(let m):
                let bytes = m.inputs.reduce(0) { $0 + $1.data.count }
                prepare(.assignment, bytes: bytes)
                assignments.append(m)
            case .taskResult(let m):
                prepare(.result, bytes: m.outcome.payloadBytes)
                results.append(m)
            case .itemFinished(let m):
                prepare(.item, bytes: m.outcome.payloadBytes)
                items.append(m)
            default:
                close()
                messages.append(message)
            }
        }

        /// Ends the run being gathered (the next batchable message starts a new one).
        public mutating func close() {
            guard count > 0 else { return }
            switch kind {
            case .assignment:
                messages.append(count == 1 ? .taskAssignment(assignments[0]) : .taskAssignments(assignments))
                assignments = []
            case .result:
                messages.append(count == 1 ? .taskResult(results[0]) : .taskResults(results))
                results = []
            case .item:
                messages.append(count == 1 ? .itemFinished(items[0]) : .itemsFinished(items))
                items = []
            }
            count = 0
            payloadBytes = 0
        }

        /// The grouped messages, the last run included; the grouping is empty afterwards.
        public mutating func finish() -> [Message] {
            close()
            defer { messages = [] }
            return messages
        }

        /// Hands each grouped message, the last run included, to `emit`, in order; the grouping is empty
        /// afterwards and keeps its storage for the next peer's messages.
        public mutating func finish(_ emit: (Message) -> Void) {
            close()
            for message in messages { emit(message) }
            messages.removeAll(keepingCapacity: true)
        }

        /// Makes room in the run for an element of `kind` with `bytes` of payload: a run of another kind,
        /// or one that would grow past the limits, is closed first.
        private mutating func prepare(_ kind: Kind, bytes: Int) {
            if count > 0, kind != self.kind || count >= limits.maxCount || payloadBytes + bytes > limits.maxPayloadBytes
            {
                close()
            }
            self.kind = kind
            count += 1
            payloadBytes += bytes
        }
    }
}

extension TaskOutcome {
    fileprivate var payloadBytes: Int {
        switch self {
        case .output(let output): output.data.count
        case .failure: 0
        }
    }
}
