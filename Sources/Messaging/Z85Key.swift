import CZeroMQ

/// The Z85 text form of a 32-byte CurveZMQ key: 40 characters of ZeroMQ's base-85 alphabet (RFC 32).
enum Z85Key {
    /// The number of characters of a Z85-encoded key.
    static let length = 40

    private static let alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// Whether `text` is a well-formed Z85 key (40 characters of the alphabet, decodable to 32 bytes).
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == length, bytes.allSatisfy(alphabet.contains) else { return false }
        return decode(text) != nil
    }

    /// The 32 bytes a Z85 key stands for, or `nil` when it is not one.
    static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count == length else { return nil }
        var output = [UInt8](repeating: 0, count: 32)
        let decoded = text.withCString { zmq_z85_decode(&output, $0) }
        return decoded == nil ? nil : output
    }

    /// The Z85 text of 32 key bytes.
    static func encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: length + 1)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else { return nil }
        return String(decoding: text.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether this libzmq can do CurveZMQ.
    static var isSupported: Bool { zmq_has("curve") != 0 }
}
