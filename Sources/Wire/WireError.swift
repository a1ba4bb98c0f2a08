/// Why bytes received from a peer could not be turned into a ``Message``.
///
/// Decoding untrusted input never traps: every problem ends up as one of these cases.
public enum WireError: Error, Equatable, CustomStringConvertible {
    /// protobuf-c could not unpack the bytes (empty, truncated, garbage, impossible lengths); the
    /// associated text says what was wrong.
    case malformed(String)
    /// The envelope has no body, or a body this version does not know (a newer peer's message).
    case missingBody
    /// The envelope's major version differs from ``WireProtocol/major``.
    case unsupportedMajorVersion(received: UInt32, supported: UInt32)
    /// A field holds a value that this version cannot act on (an unknown task kind or image format,
    /// an unset result outcome); the associated text names the field and the value.
    case invalidField(String)

    /// A one-line explanation, suitable for logs and refusals.
    public var description: String {
        switch self {
        case .malformed(let detail):
            "malformed message: \(detail)"
        case .missingBody:
            "the envelope has no body this version knows"
        case .unsupportedMajorVersion(let received, let supported):
            "unsupported wire protocol major version \(received) (this peer speaks \(supported))"
        case .invalidField(let detail):
            "invalid field: \(detail)"
        }
    }
}
