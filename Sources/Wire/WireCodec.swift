import CShiftworkProto

/// Encodes a ``Message`` into the bytes of a protobuf `Envelope` and decodes them back, through the
/// protobuf-c code generated from `proto/shiftwork/v1/shiftwork.proto`.
///
/// Image payloads are copied once each way: into the packed output on encoding, out of protobuf-c's
/// unpacked tree on decoding. Decoding never traps on untrusted input: every problem is a ``WireError``.
public enum WireCodec {
    /// The bytes of an `Envelope` carrying `message`, with ``WireProtocol/major`` and
    /// ``WireProtocol/minor`` set. Strings are sent as UTF-8 and end at a U+0000 character if they contain one.
    public static func encode(_ message: Message) -> [UInt8] {
        encode(message, witnessed: nil)
    }

    /// The bytes of an `Envelope` carrying `message` and `witnessed`, the witnessed position of a pair of
    /// coordinators (docs/failover.md, "The witnessed position"); `nil` leaves it out (no byte is sent for it).
    public static func encode(_ message: Message, witnessed: WirePairPosition?) -> [UInt8] {
        CMessageBuilder.withEnvelope(of: message, witnessed: witnessed) { envelope in
            let size = shiftwork__v1__envelope__get_packed_size(envelope)
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
                guard let base = buffer.baseAddress else {
                    initializedCount = 0
                    return
                }
                initializedCount = shiftwork__v1__envelope__pack(envelope, base)
            }
        }
    }

    /// The message in the `Envelope` held by `bytes`.
    ///
    /// - Throws: ``WireError/malformed(_:)`` for bytes that are not an envelope (empty included),
    ///   ``WireError/unsupportedMajorVersion(received:supported:)`` for another major version,
    ///   ``WireError/missingBody`` for an envelope without a body this version knows, and
    ///   ``WireError/invalidField(_:)`` for a value this version cannot act on.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> Message {
        var witnessed: WirePairPosition?
        return try decode(bytes, witnessed: &witnessed)
    }

    /// The message in the `Envelope` held by `bytes`, and in `witnessed` the envelope's witnessed position
    /// (`nil` when it was left out): a number from the network, which the receiver bounds where it uses it.
    /// Throws as ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, witnessed: inout WirePairPosition?
    ) throws(WireError) -> Message {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw .malformed("empty input")
        }
        guard
            let envelope = shiftwork__v1__envelope__unpack(
                nil, bytes.count, base.assumingMemoryBound(to: UInt8.self))
        else {
            throw .malformed("not a valid Envelope (\(bytes.count) bytes)")
        }
        defer { shiftwork__v1__envelope__free_unpacked(envelope, nil) }
        guard envelope.pointee.major == WireProtocol.major else {
            throw .unsupportedMajorVersion(received: envelope.pointee.major, supported: WireProtocol.major)
        }
        if let position = envelope.pointee.witnessed {
            witnessed = WirePairPosition(term: position.pointee.term, records: position.pointee.records)
        }
        return try Message(envelope: envelope.pointee)
    }

    /// The message in the `Envelope` held by `bytes`; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Message {
        var witnessed: WirePairPosition?
        return try decode(bytes, witnessed: &witnessed)
    }

    /// The message in the `Envelope` held by `bytes`, and its witnessed position; see
    /// ``decode(_:witnessed:)-(UnsafeRawBufferPointer,_)``.
    public static func decode(_ bytes: [UInt8], witnessed: inout WirePairPosition?) throws(WireError) -> Message {
        var found: WirePairPosition?
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(WireError) -> Message in try decode(buffer, witnessed: &found) }
        }
        witnessed = found
        return try result.get()
    }
}
