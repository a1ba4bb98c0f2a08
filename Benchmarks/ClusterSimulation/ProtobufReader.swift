/// Reads protobuf's wire format field by field over a range of bytes, for the simulation's fast paths.
/// Every read checks its bounds: malformed bytes give `nil` (or `false`), never a trap.
struct ProtobufReader {
    /// The wire types this reader knows (groups, long deprecated, are not among them).
    enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    private let bytes: UnsafeRawBufferPointer
    private var position: Int
    private let end: Int

    /// A reader of `range` within `bytes` (a range outside them reads as malformed at once).
    init(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>) {
        self.bytes = bytes
        let clamped = range.clamped(to: 0..<bytes.count)
        self.position = clamped == range ? range.lowerBound : bytes.count
        self.end = clamped == range ? range.upperBound : bytes.count
    }

    /// Whether every byte of the range has been read.
    var isAtEnd: Bool { position >= end }

    /// The next field's number and wire type.
    mutating func tag() -> (UInt64, WireType)? {
        guard let key = varint(), let wireType = WireType(rawValue: key & 7), key >> 3 > 0 else { return nil }
        return (key >> 3, wireType)
    }

    /// A varint (at most 10 bytes).
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// A length-delimited field's bytes, as a range of the whole buffer.
    mutating func lengthDelimited() -> Range<Int>? {
        guard let length = varint(), length <= UInt64(end - position) else { return nil }
        let start = position
        position += Int(length)
        return start..<position
    }

    /// Steps over a field's value of `wireType`.
    mutating func skip(_ wireType: WireType) -> Bool {
        switch wireType {
        case .varint: return varint() != nil
        case .lengthDelimited: return lengthDelimited() != nil
        case .fixed64, .fixed32:
            let size = wireType == .fixed64 ? 8 : 4
            guard end - position >= size else { return false }
            position += size
            return true
        }
    }
}
