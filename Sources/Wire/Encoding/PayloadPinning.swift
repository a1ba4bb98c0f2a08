/// The large `bytes` fields of a message (image payloads), pinned in place so that the C tree can
/// point at the Swift arrays' own storage instead of copying them.
///
/// Each array is pinned by a nested `withUnsafeBufferPointer` scope, so its pointer is valid exactly
/// while the C tree is built and packed. The nesting is bounded by ``maxPinned``; payloads beyond it
/// (only a message with that many injected inputs) are copied into the arena instead.
struct PinnedPayloads {
    /// How many payloads are pinned at most (the depth of the nested scopes).
    static let maxPinned = 16

    /// The pinned buffers, in the order in which the builder asks for them: ``Message/payloads``, generated
    /// with the builders from proto/ (Generated/MessagePayloads.generated.swift).
    let buffers: [UnsafeBufferPointer<UInt8>]

    /// Pins the payloads of `message` and runs `body` while they are pinned.
    static func with<R>(_ message: Message, _ body: (PinnedPayloads) -> R) -> R {
        let payloads = message.payloads
        var pinned: [UnsafeBufferPointer<UInt8>] = []
        pinned.reserveCapacity(min(payloads.count, maxPinned))
        func pin(_ index: Int) -> R {
            guard index < payloads.count, index < maxPinned else {
                return body(PinnedPayloads(buffers: pinned))
            }
            return payloads[index].withUnsafeBufferPointer { buffer in
                pinned.append(buffer)
                return pin(index + 1)
            }
        }
        return pin(0)
    }
}
