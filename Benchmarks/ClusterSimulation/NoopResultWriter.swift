import Wire

/// A simulated worker's no-op results, written straight as the bytes ``WireCodec`` encodes for them: the
/// simulation's fast path, so that answering a no-op task costs the simulator a few appended bytes instead
/// of a ``TaskResult``, a ``Message`` and protobuf-c's packing per result.
///
/// A real worker answers a no-op task with an empty output (`TaskOutput(data: [])`) and sends the results of
/// one wake-up as ``MessageBatching/coalesce(_:limits:)`` groups them: one result as a `TaskResult` message,
/// several as `TaskResultBatch` messages of at most `maxCount` results, or each alone to a coordinator that
/// does not take batches. ``flush(batches:_:)`` sends exactly those messages, byte for byte
/// (`NoopWireTests` compares them with ``WireCodec``'s).
///
/// Each result is kept as it would stand in a `TaskResultBatch` (a field 1 record holding the `TaskResult`'s
/// fields); a message's envelope header is written into the bytes just before its first record (the
/// headroom, or records already sent), so a message is sent from the buffer without being copied first.
public struct NoopResultWriter {
    /// Room before the first record for the longest envelope header (4 bytes of version, a tag, a varint).
    private static let headroom = 16
    private var buffer = [UInt8](repeating: 0, count: NoopResultWriter.headroom)
    /// Where each result's record starts in `buffer`.
    private var records: [Int] = []
    private let maxCount: Int

    /// An empty writer whose batch messages hold at most `maxCount` results (``MessageBatching``'s limit).
    public init(maxCount: Int = MessageBatching.Limits().maxCount) {
        self.maxCount = max(1, maxCount)
    }

    /// The results added since the last flush.
    public var count: Int { records.count }

    /// Adds the successful, empty result of the no-op task `taskID` (its UTF-8 bytes), `attempt`, `taskKey`.
    public mutating func add(taskID: UnsafeRawBufferPointer, attempt: UInt32, taskKey: UInt64) {
        // TaskResult: task_id = 1, attempt = 2, output = 3 (an empty TaskOutput), task_key = 5; proto3 leaves
        // out the fields at their defaults, as protobuf-c does.
        var fields = 2
        if !taskID.isEmpty { fields += 1 + Self.varintSize(UInt64(taskID.count)) + taskID.count }
        if attempt != 0 { fields += 1 + Self.varintSize(UInt64(attempt)) }
        if taskKey != 0 { fields += 1 + Self.varintSize(taskKey) }
        records.append(buffer.count)
        buffer.append(0x0A)  // TaskResultBatch.results
        appendVarint(UInt64(fields))
        if !taskID.isEmpty {
            buffer.append(0x0A)
            appendVarint(UInt64(taskID.count))
            buffer.append(contentsOf: taskID)
        }
        if attempt != 0 {
            buffer.append(0x10)
            appendVarint(UInt64(attempt))
        }
        buffer.append(0x1A)
        buffer.append(0x00)
        if taskKey != 0 {
            buffer.append(0x28)
            appendVarint(taskKey)
        }
    }

    /// Drops the results added since the last flush (a `Welcome` starts a new registration).
    public mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        buffer.removeSubrange(Self.headroom...)
    }

    /// Hands each message's bytes to `send`, in order (valid during the call only), and empties the writer:
    /// batch messages when `batches` (the coordinator's `Welcome.accepts_batches`), else each result alone.
    public mutating func flush(batches: Bool, _ send: (UnsafeRawBufferPointer) -> Void) {
        var first = 0
        while first < records.count {
            let last = batches ? min(records.count, first + maxCount) : first + 1
            let start = records[first]
            let end = last < records.count ? records[last] : buffer.count
            if last - first == 1 {
                // One result: a `TaskResult` body holding the record's fields.
                var fieldsStart = start + 1
                while buffer[fieldsStart] & 0x80 != 0 { fieldsStart += 1 }
                fieldsStart += 1
                sendWithHeader(body: Self.taskResultField, from: fieldsStart, to: end, send)
            } else {
                sendWithHeader(body: Self.taskResultBatchField, from: start, to: end, send)
            }
            first = last
        }
        removeAll()
    }

    /// `Envelope.task_result` and `Envelope.task_results`, as length-delimited tags.
    private static let taskResultField: UInt64 = 12 << 3 | 2
    private static let taskResultBatchField: UInt64 = 14 << 3 | 2

    /// Writes the envelope's header (major, minor, the body's tag and length) just before `start` and sends
    /// the header and `start..<end`.
    private mutating func sendWithHeader(
        body tag: UInt64, from start: Int, to end: Int,
        _ send: (UnsafeRawBufferPointer) -> Void
    ) {
        let major = UInt64(WireProtocol.major)
        let minor = UInt64(WireProtocol.minor)
        let length = UInt64(end - start)
        let headerSize =
            2 + Self.varintSize(major) + Self.varintSize(minor) + Self.varintSize(tag) + Self.varintSize(length)
        let headerStart = start - headerSize
        precondition(headerStart >= 0, "NoopResultWriter: no room for the envelope header")
        buffer.withUnsafeMutableBytes { bytes in
            var position = headerStart
            Self.writeVarint(0x08, into: bytes, at: &position)  // major = 1
            Self.writeVarint(major, into: bytes, at: &position)
            Self.writeVarint(0x10, into: bytes, at: &position)  // minor = 2
            Self.writeVarint(minor, into: bytes, at: &position)
            Self.writeVarint(tag, into: bytes, at: &position)
            Self.writeVarint(length, into: bytes, at: &position)
            send(UnsafeRawBufferPointer(rebasing: bytes[headerStart..<end]))
        }
    }

    private static func writeVarint(_ value: UInt64, into bytes: UnsafeMutableRawBufferPointer, at position: inout Int)
    {
        var rest = value
        while rest >= 0x80 {
            bytes[position] = UInt8(truncatingIfNeeded: rest) | 0x80
            position += 1
            rest >>= 7
        }
        bytes[position] = UInt8(rest)
        position += 1
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        buffer.append(UInt8(rest))
    }

    private static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }
}
