/// An image file format that Imaging reads and writes.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    /// Lossy WebP (libwebp), still images only.
    case webp
    /// AVIF: AV1 in HEIF (libavif), still images only.
    case avif

    /// Recognises a format by its magic bytes (never by a file name or a declared media type).
    ///
    /// JPEG starts with `FF D8 FF`; PNG with `89 50 4E 47 0D 0A 1A 0A`; WebP with `RIFF`, a size, `WEBP`; AVIF with
    /// an ISO BMFF `ftyp` box whose major or a compatible brand is `avif` or `avis`. Returns nil for anything else.
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(Self.sniffedBytes))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF {
            self = .jpeg
        } else if head.count >= 8, Array(head[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            self = .png
        } else if head.count >= 12, Array(head[0..<4]) == Array("RIFF".utf8), Array(head[8..<12]) == Array("WEBP".utf8) {
            self = .webp
        } else if Self.isAVIF(head) {
            self = .avif
        } else {
            return nil
        }
    }

    /// The bytes `init(sniffing:)` looks at.
    package static let sniffedBytes = 64

    /// An `ftyp` box at the start whose major brand (bytes 8…11) or one of its compatible brands (from byte 16 to
    /// the box's end) is `avif` or `avis`.
    private static func isAVIF(_ head: [UInt8]) -> Bool {
        guard head.count >= 16, Array(head[4..<8]) == Array("ftyp".utf8) else { return false }
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let brands = [Array("avif".utf8), Array("avis".utf8)]
        if brands.contains(Array(head[8..<12])) { return true }
        var offset = 16
        while offset + 4 <= min(boxSize, head.count) {
            if brands.contains(Array(head[offset..<offset + 4])) { return true }
            offset += 4
        }
        return false
    }

    /// Parses a user-supplied format name: "jpeg", "jpg", "png", "webp", "avif" (any case).
    public init?(name: String) {
        switch name.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "avif": self = .avif
        default: return nil
        }
    }

    /// The usual file extension, without a dot: "jpg", "png", "webp" or "avif".
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        case .avif: "avif"
        }
    }

    /// The media type: "image/jpeg", "image/png", "image/webp" or "image/avif".
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        }
    }

    /// The format of a media type written by `mediaType` (nil for any other).
    public init?(mediaType: String) {
        guard let format = Self.allCases.first(where: { $0.mediaType == mediaType.lowercased() }) else { return nil }
        self = format
    }

    /// The formats by name, for messages: "jpeg, png, webp, avif".
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// What the formats are called in messages about data that is none of them: "JPEG, PNG, WebP or AVIF".
    package static let readableNames = "JPEG, PNG, WebP or AVIF"

    /// Describes the first bytes of data that is not a supported image, for error messages:
    /// `not a JPEG, PNG, WebP or AVIF image (starts with '<!DO')`.
    package static func unrecognisedMessage(_ bytes: some Collection<UInt8>) -> String {
        if bytes.isEmpty { return "not a \(readableNames) image (the data is empty)" }
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
        return "not a \(readableNames) image (starts with \(shown))"
    }
}
