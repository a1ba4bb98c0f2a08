import CShiftworkProto

/// Builds the protobuf-c struct tree of an `Envelope` from a ``Message``.
///
/// The builder of each message (`envelope(_:)`, `taskAssignment(_:)`…) is generated from proto/ by
/// scripts/generate-wire-swift (Generated/*+Builders.generated.swift); this file holds what they use.
///
/// Every struct, string and small array lives in the ``EncodingArena``; `bytes` fields point into the
/// ``PinnedPayloads`` (the Swift arrays' own storage). The tree is valid only inside the scopes that
/// own those two, which is where ``WireCodec`` packs it.
struct CMessageBuilder: ~Copyable {
    var arena: EncodingArena
    private let pinned: PinnedPayloads
    private var nextPinned = 0

    /// Runs `body` with the envelope of `message` (and its `witnessed` position, when given), built in scoped
    /// memory that is freed afterwards.
    static func withEnvelope<R>(
        of message: Message, witnessed: WirePairPosition? = nil,
        _ body: (UnsafePointer<Shiftwork__V1__Envelope>) -> R
    ) -> R {
        PinnedPayloads.with(message) { pinned in
            var builder = CMessageBuilder(pinned: pinned)
            let envelope = builder.envelope(message)
            if let witnessed { envelope.pointee.witnessed = builder.pairPosition(witnessed) }
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

    // MARK: Fields

    mutating func string(_ value: String) -> UnsafeMutablePointer<CChar> {
        arena.cString(value)
    }

    /// A `bytes` field: the next pinned payload when it is this very array (the same storage), else a copy
    /// in the arena. A payload visited out of order is thus copied, never paired with another field's bytes.
    mutating func bytes(_ value: [UInt8]) -> ProtobufCBinaryData {
        if nextPinned < pinned.buffers.count {
            let buffer = pinned.buffers[nextPinned]
            nextPinned += 1
            // Only compared, never read through: `value`'s storage is the pinned one or it is copied below.
            let isPinnedStorage = value.withUnsafeBufferPointer {
                $0.baseAddress == buffer.baseAddress && $0.count == buffer.count
            }
            assert(isPinnedStorage, "payload visited out of order (Message.payloads and the builders disagree)")
            if isPinnedStorage {
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
