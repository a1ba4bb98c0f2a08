/// An image file format that Imaging reads and writes.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png

    /// Recognises a format by its magic bytes (never by a file name or a declared media type).
    ///
    /// JPEG starts with `FF D8 FF`; PNG with `89 50 4E 47 0D 0A 1A 0A`. Returns nil for anything else.
    public init?(sniffing bytes: some Collection<UInt8>) {
        var iterator = bytes.makeIterator()
        var head: [UInt8] = []
        head.reserveCapacity(8)
        while head.count < 8, let byte = iterator.next() { head.append(byte) }
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF {
            self = .jpeg
        } else if head.count >= 8, head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            self = .png
        } else {
            return nil
        }
    }

    /// Parses a user-supplied format name: "jpeg", "jpg", "png" (any case).
    public init?(name: String) {
        switch name.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        default: return nil
        }
    }

    /// The usual file extension, without a dot: "jpg" or "png".
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        }
    }

    /// The media type: "image/jpeg" or "image/png".
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        }
    }

    /// Describes the first bytes of data that is not a supported image, for error messages:
    /// `not a JPEG or PNG image (starts with '<!DO')`.
    package static func unrecognisedMessage(_ bytes: some Collection<UInt8>) -> String {
        if bytes.isEmpty { return "not a JPEG or PNG image (the data is empty)" }
        let head = Array(bytes.prefix(4))
        let printable = head.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let shown: String
        if printable {
            shown = "'" + String(decoding: head, as: UTF8.self) + "'"
        } else {
            shown = head.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: " ")
        }
        return "not a JPEG or PNG image (starts with \(shown))"
    }
}
