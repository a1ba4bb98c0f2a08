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
        var out: [Message] = []
        var run: Run?
        for message in messages {
            guard let element = Element(message) else {
                if let finished = run.take() { out.append(finished.message) }
                out.append(message)
                continue
            }
            if run != nil, !run!.accepts(element, limits: limits) {
                out.append(run.take()!.message)
            }
            if run == nil {
                run = Run(element)
            } else {
                run!.append(element)
            }
        }
        if let finished = run { out.append(finished.message) }
        return out
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

    private enum Element {
        case assignment(TaskAssignment)
        case result(TaskResult)
        case item(ItemFinished)

        init?(_ message: Message) {
            switch message {
            case .taskAssignment(let m): self = .assignment(m)
            case .taskResult(let m): self = .result(m)
            case .itemFinished(let m): self = .item(m)
            default: return nil
            }
        }

        var payloadBytes: Int {
            switch self {
            case .assignment(let m): m.inputs.reduce(0) { $0 + $1.data.count }
            case .result(let m): m.outcome.payloadBytes
            case .item(let m): m.outcome.payloadBytes
            }
        }

        func sameKind(as other: Element) -> Bool {
            switch (self, other) {
            case (.assignment, .assignment), (.result, .result), (.item, .item): true
            default: false
            }
        }
    }

    private struct Run {
        var elements: [Element]
        var payloadBytes: Int

        init(_ first: Element) {
            elements = [first]
            payloadBytes = first.payloadBytes
        }

        func accepts(_ element: Element, limits: Limits) -> Bool {
            element.sameKind(as: elements[0]) && elements.count < limits.maxCount
                && payloadBytes + element.payloadBytes <= limits.maxPayloadBytes
        }

        mutating func append(_ element: Element) {
            elements.append(element)
            payloadBytes += element.payloadBytes
        }

        var message: Message {
            if elements.count == 1 {
                switch elements[0] {
                case .assignment(let m): return .taskAssignment(m)
                case .result(let m): return .taskResult(m)
                case .item(let m): return .itemFinished(m)
                }
            }
            switch elements[0] {
            case .assignment:
                return .taskAssignments(elements.map { if case .assignment(let m) = $0 { m } else { fatalError() } })
            case .result:
                return .taskResults(elements.map { if case .result(let m) = $0 { m } else { fatalError() } })
            case .item:
                return .itemsFinished(elements.map { if case .item(let m) = $0 { m } else { fatalError() } })
            }
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

extension Optional {
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
