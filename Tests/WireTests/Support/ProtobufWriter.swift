/// Writes protobuf wire format by hand, to build envelopes that ``Wire/WireCodec`` itself would never
/// produce (other versions, unknown fields and enum values, impossible lengths).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func tag(_ field: UInt64, wireType: UInt64) {
        varint(field << 3 | wireType)
    }

    /// A varint field (wire type 0).
    mutating func uint(_ field: UInt64, _ value: UInt64) {
        tag(field, wireType: 0)
        varint(value)
    }

    /// A length-delimited field (wire type 2).
    mutating func bytes(_ field: UInt64, _ value: [UInt8]) {
        tag(field, wireType: 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ field: UInt64, _ value: String) {
        bytes(field, Array(value.utf8))
    }

    /// A nested message field.
    mutating func message(_ field: UInt64, _ build: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        build(&nested)
        bytes(field, nested.bytes)
    }

    /// An envelope with the given major version and a body built by `body` in field `bodyField`.
    static func envelope(
        major: UInt64 = 1, minor: UInt64 = 0, bodyField: UInt64?, _ body: (inout ProtobufWriter) -> Void = { _ in }
    ) -> [UInt8] {
        var writer = ProtobufWriter()
        if major != 0 { writer.uint(1, major) }
        if minor != 0 { writer.uint(2, minor) }
        if let bodyField {
            writer.message(bodyField, body)
        }
        return writer.bytes
    }
}

/// Envelope body field numbers, from proto/shiftwork/v1/shiftwork.proto.
enum BodyField {
    static let heartbeat: UInt64 = 11
    static let taskResult: UInt64 = 12
    static let taskAssignment: UInt64 = 21
    static let submitBatch: UInt64 = 30
    static let itemFinished: UInt64 = 41
}
