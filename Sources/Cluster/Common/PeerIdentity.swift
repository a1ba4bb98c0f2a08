/// The routing identity of a peer as the coordinator's ROUTER socket sees it (the first frame).
struct PeerIdentity: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The bytes hashed in one go (an array hashes element by element): several look-ups per task use it.
    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: PeerIdentity, rhs: PeerIdentity) -> Bool { lhs.bytes == rhs.bytes }

    var description: String {
        if let text = String(validating: bytes, as: UTF8.self), text.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            return text
        }
        return bytes.map { String($0, radix: 16) }.joined()
    }
}
