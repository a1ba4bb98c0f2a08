import Wire

/// A no-op task assignment as a simulated worker needs it to answer: read in place from the received
/// message's bytes, without building a ``TaskAssignment``.
public struct NoopAssignment: Sendable, Equatable {
    /// Where the task ID's UTF-8 bytes are in the scanned message.
    public var taskID: Range<Int>
    /// The attempt, echoed in the result.
    public var attempt: UInt32
    /// The coordinator's number for the task, echoed in the result.
    public var taskKey: UInt64
    /// The assignment's sequence number (reported back in heartbeats as the highest received).
    public var sequence: UInt64

    /// An assignment whose task ID is at `taskID` in the scanned bytes.
    public init(taskID: Range<Int>, attempt: UInt32, taskKey: UInt64, sequence: UInt64) {
        self.taskID = taskID
        self.attempt = attempt
        self.taskKey = taskKey
        self.sequence = sequence
    }
}

/// Reads the no-op assignments out of a received `Envelope` without decoding it: the simulation's
/// fast path, so that answering a no-op task costs the simulator a scan of its bytes instead of
/// protobuf-c's unpacking and a ``Message`` of Swift values (strings, arrays) per assignment.
///
/// It recognises only an envelope of this major version whose body is a `TaskAssignment` or a
/// `TaskAssignmentBatch` in which every assignment is a no-op; anything else (a photo task, a welcome,
/// a refusal, bytes that are not protobuf) makes ``scan(_:into:)`` return `false`, and the caller
/// decodes the message with ``WireCodec`` as before, which reports what is wrong with it.
public enum NoopAssignmentScan {
    /// Appends the no-op assignments of the envelope in `bytes` to `assignments` and returns `true`, or
    /// returns `false` (leaving `assignments` as it was) when the message is anything else.
    public static func scan(_ bytes: UnsafeRawBufferPointer, into assignments: inout [NoopAssignment]) -> Bool {
        let start = assignments.count
        var reader = ProtobufReader(bytes, in: 0..<bytes.count)
        var major: UInt64 = 0
        var body = false
        while !reader.isAtEnd {
            guard let (field, wireType) = reader.tag() else { return undo(&assignments, to: start) }
            switch (field, wireType) {
            case (1, .varint):
                guard let value = reader.varint() else { return undo(&assignments, to: start) }
                major = value
            case (Self.assignmentField, .lengthDelimited):
                guard !body, let range = reader.lengthDelimited(),
                    scanAssignment(bytes, range, into: &assignments)
                else { return undo(&assignments, to: start) }
                body = true
            case (Self.assignmentBatchField, .lengthDelimited):
                guard !body, let range = reader.lengthDelimited(),
                    scanBatch(bytes, range, into: &assignments)
                else { return undo(&assignments, to: start) }
                body = true
            case (Self.assignmentField, _), (Self.assignmentBatchField, _):
                return undo(&assignments, to: start)
            case (10..., _):
                return undo(&assignments, to: start)  // another body: decoded whole
            default:
                guard reader.skip(wireType) else { return undo(&assignments, to: start) }
            }
        }
        guard body, major == UInt64(WireProtocol.major) else { return undo(&assignments, to: start) }
        return true
    }

    /// `Envelope.task_assignment` and `Envelope.task_assignments`.
    static let assignmentField: UInt64 = 21
    static let assignmentBatchField: UInt64 = 23
    /// `TaskKind.TASK_KIND_NOOP`.
    static let noopKind: UInt64 = 3

    private static func undo(_ assignments: inout [NoopAssignment], to count: Int) -> Bool {
        assignments.removeSubrange(count...)
        return false
    }

    private static func scanBatch(
        _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
        into assignments: inout [NoopAssignment]
    ) -> Bool {
        var reader = ProtobufReader(bytes, in: range)
        while !reader.isAtEnd {
            guard let (field, wireType) = reader.tag() else { return false }
            if field == 1 {
                guard wireType == .lengthDelimited, let element = reader.lengthDelimited(),
                    scanAssignment(bytes, element, into: &assignments)
                else { return false }
            } else {
                guard reader.skip(wireType) else { return false }
            }
        }
        return true
    }

    /// One `TaskAssignment`: appended when it is a no-op (of any other kind, or carrying a follow-on: `false`).
    private static func scanAssignment(
        _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
        into assignments: inout [NoopAssignment]
    ) -> Bool {
        var reader = ProtobufReader(bytes, in: range)
        var found = NoopAssignment(taskID: range.lowerBound..<range.lowerBound, attempt: 0, taskKey: 0, sequence: 0)
        var kind: UInt64 = 0
        while !reader.isAtEnd {
            guard let (field, wireType) = reader.tag() else { return false }
            switch (field, wireType) {
            case (1, .lengthDelimited):
                guard let taskID = reader.lengthDelimited() else { return false }
                found.taskID = taskID
            case (3, .varint):
                guard let attempt = reader.varint(), attempt <= UInt64(UInt32.max) else { return false }
                found.attempt = UInt32(attempt)
            case (4, .varint):
                guard let value = reader.varint() else { return false }
                kind = value
            case (8, .varint):
                guard let key = reader.varint() else { return false }
                found.taskKey = key
            case (9, .varint):
                guard let sequence = reader.varint() else { return false }
                found.sequence = sequence
            case (1, _), (3, _), (4, _), (8, _), (9, _), (300, _):
                return false  // a wire type the full decoder would refuse, or a follow-on (never on a no-op)
            default:
                guard reader.skip(wireType) else { return false }
            }
        }
        guard kind == noopKind else { return false }
        assignments.append(found)
        return true
    }
}
