/// What kind of record a journal record is (the case of its `oneof record`), read from its top-level
/// fields alone, without decoding its body. The pair's stream needs no more to count positions (only
/// `pairPosition` and `pairTerm` set them from their body) and to decide what the passive coordinator syncs.
public enum JournalRecordKind: Sendable, Equatable, CaseIterable {
    case started, batchAccepted, itemFinished, batchCancelled, batchRetired, itemsAdded, batchRetried
    case attemptFailed, pairPosition, pairTerm, pairHistory

    /// The kind of the `oneof record` field numbered `field` (proto/shiftwork/v1/journal.proto), if any.
    init?(field: UInt64) {
        switch field {
        case 1: self = .started
        case 2: self = .batchAccepted
        case 3: self = .itemFinished
        case 4: self = .batchCancelled
        case 5: self = .batchRetired
        case 6: self = .itemsAdded
        case 200: self = .batchRetried
        case 210: self = .attemptFailed
        case 800: self = .pairPosition
        case 801: self = .pairTerm
        case 802: self = .pairHistory
        default: return nil
        }
    }

    /// The kind of the record in `bytes`: every top-level field's key and length must lie within `bytes`
    /// (the body of a known field is not read), and, as protobuf decoding does, the last case of the `oneof`
    /// present wins and unknown fields are skipped. `nil` for bytes that are not a record's top level (a
    /// field cut short, a malformed key) or a record of no kind this version knows.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> JournalRecordKind? {
        var reader = ProtobufFieldReader(bytes)
        var kind: JournalRecordKind?
        while !reader.isAtEnd {
            guard let (field, wireType) = reader.key(), reader.skip(wireType: wireType) else { return nil }
            if let known = JournalRecordKind(field: field) {
                guard wireType == 2 else { return nil }  // a message field is length-delimited
                kind = known
            }
        }
        return kind
    }

    /// The kind of the record in `bytes`; see ``of(_:)-(UnsafeRawBufferPointer)``.
    public static func of(_ bytes: [UInt8]) -> JournalRecordKind? {
        bytes.withUnsafeBytes { of($0) }
    }

    /// Whether a record of this kind only says where the journal stands or what its coordinator is
    /// (`started`, `pairHistory`, `pairPosition`): it adds nothing to the journal's count.
    public var isCounted: Bool {
        switch self {
        case .started, .pairHistory, .pairPosition: false
        default: true
        }
    }

    /// Whether the coordinator writes records of this kind with `fdatasync` before it goes on (an accepted
    /// batch, a retry, a takeover's term, what a coordinator of a pair is), as `Journal` does.
    public var isSynced: Bool {
        switch self {
        case .batchAccepted, .batchRetried, .pairTerm, .pairHistory: true
        default: false
        }
    }
}

extension JournalRecord {
    /// The record's kind.
    public var kind: JournalRecordKind {
        switch self {
        case .started: .started
        case .batchAccepted: .batchAccepted
        case .itemFinished: .itemFinished
        case .itemsAdded: .itemsAdded
        case .batchCancelled: .batchCancelled
        case .batchRetried: .batchRetried
        case .attemptFailed: .attemptFailed
        case .batchRetired: .batchRetired
        case .pairPosition: .pairPosition
        case .pairTerm: .pairTerm
        case .pairHistory: .pairHistory
        }
    }
}

/// Reads protobuf's top-level keys and skips their values, with every length checked against the bytes.
private struct ProtobufFieldReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    /// A field's number and wire type (`nil`: a malformed key, or field number 0).
    mutating func key() -> (field: UInt64, wireType: UInt8)? {
        guard let key = varint(), key >> 3 != 0 else { return nil }
        return (key >> 3, UInt8(key & 7))
    }

    /// Skips one value of `wireType`; false when it does not fit in the bytes (or the wire type is a group,
    /// which no record holds).
    mutating func skip(wireType: UInt8) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return advance(8)
        case 2:
            guard let length = varint(), length <= UInt64(bytes.count - offset) else { return false }
            return advance(Int(length))
        case 5: return advance(4)
        default: return false
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard bytes.count - offset >= count else { return false }
        offset += count
        return true
    }

    /// A base-128 varint of at most 10 bytes.
    private mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
