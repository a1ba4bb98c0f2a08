/// An image file format that Imaging reads; all but HEIF, GIF and BMP it also writes (``isWritable``).
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    /// Lossy WebP (libwebp), still images only.
    case webp
    /// AVIF: AV1 in HEIF (libavif), still images only.
    case avif
    /// TIFF (libtiff): read (the first page) and written (Deflate).
    case tiff
    /// HEIF, HEIC among them (libheif): read only, the primary image; written as JPEG by default.
    case heif
    /// GIF (giflib): read only, the first frame; written as JPEG by default.
    case gif
    /// Windows BMP (a reader of our own): read only; written as JPEG by default.
    case bmp

    /// Recognises a format by its magic bytes (never by a file name or a declared media type).
    ///
    /// JPEG starts with `FF D8 FF`; PNG with `89 50 4E 47 0D 0A 1A 0A`; WebP with `RIFF`, a size, `WEBP`; AVIF with
    /// an ISO BMFF `ftyp` box whose major or a compatible brand is `avif` or `avis`; HEIF with an `ftyp` box of an
    /// HEIF brand (`heic`, `heix`, `heim`, `heis`, `hevc`, `hevx`, `mif1`, `msf1`) and neither AVIF brand; TIFF with
    /// `II*\0` or `MM\0*` (`II+\0`, `MM\0+`: BigTIFF); GIF with `GIF87a` or `GIF89a`; BMP with `BM` and, at byte 14, the
    /// size of one of the Windows headers (12, 40, 52, 56, 108 or 124). Returns nil for anything else.
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(Self.sniffedBytes))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF {
            self = .jpeg
        } else if head.count >= 8, Array(head[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            self = .png
        } else if head.count >= 12, Array(head[0..<4]) == Array("RIFF".utf8), Array(head[8..<12]) == Array("WEBP".utf8)
        {
            self = .webp
        } else if Self.hasBrand(head, ["avif", "avis"]) {
            self = .avif
        } else if Self.hasBrand(head, ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]) {
            self = .heif
        } else if head.count >= 4,
            [
                [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A], [0x49, 0x49, 0x2B, 0x00],
                [0x4D, 0x4D, 0x00, 0x2B],
            ].contains(Array(head[0..<4]))
        {
            self = .tiff
        } else if head.count >= 6, [Array("GIF87a".utf8), Array("GIF89a".utf8)].contains(Array(head[0..<6])) {
            self = .gif
        } else if Self.isBMP(head) {
            self = .bmp
        } else {
            return nil
        }
    }

    /// The bytes `init(sniffing:)` looks at (the longest signature, an `ftyp` box's brands, needs them).
    package static let sniffedBytes = 64

    /// An `ftyp` box at the start whose major brand (bytes 8…11) or one of its compatible brands (from byte 16 to
    /// the box's end) is one of `brands`.
    private static func hasBrand(_ head: [UInt8], _ brands: [String]) -> Bool {
        guard head.count >= 16, Array(head[4..<8]) == Array("ftyp".utf8) else { return false }
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let brands = brands.map { Array($0.utf8) }
        if brands.contains(Array(head[8..<12])) { return true }
        var offset = 16
        while offset + 4 <= min(boxSize, head.count) {
            if brands.contains(Array(head[offset..<offset + 4])) { return true }
            offset += 4
        }
        return false
    }

    /// `BM`, then (at byte 14) the size of a Windows BMP header: two letters alone are too common a start.
    private static func isBMP(_ head: [UInt8]) -> Bool {
        guard head.count >= 18, head[0] == 0x42, head[1] == 0x4D else { return false }
        let headerSize = Int(head[14]) | Int(head[15]) << 8 | Int(head[16]) << 16 | Int(head[17]) << 24
        return [12, 40, 52, 56, 64, 108, 124].contains(headerSize)
    }

    /// Parses a user-supplied format name (any case): "jpeg", "jpg", "png", "webp", "avif", "tiff", "tif", and the
    /// formats only read, "heic", "heif", "gif", "bmp" (``isWritable`` tells them apart).
    public init?(name: String) {
        switch name.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "avif": self = .avif
        case "tiff", "tif": self = .tiff
        case "heic", "heif": self = .heif
        case "gif": self = .gif
        case "bmp": self = .bmp
        default: return nil
        }
    }

    /// Whether Imaging writes this format (JPEG, PNG, WebP, AVIF, TIFF); HEIF, GIF and BMP are only read.
    public var isWritable: Bool {
        switch self {
        case .jpeg, .png, .webp, .avif, .tiff: true
        case .heif, .gif, .bmp: false
        }
    }

    /// The formats Imaging writes.
    public static var writable: [ImageFormat] { allCases.filter(\.isWritable) }

    /// What an input of this format is written as when no output format is chosen: itself when it is writable, else
    /// JPEG (HEIF, GIF, BMP).
    public var defaultOutput: ImageFormat { isWritable ? self : .jpeg }

    /// The format's name for people: "JPEG", "PNG", "WebP", "AVIF", "TIFF", "HEIF", "GIF", "BMP".
    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .webp: "WebP"
        case .avif: "AVIF"
        case .tiff: "TIFF"
        case .heif: "HEIF"
        case .gif: "GIF"
        case .bmp: "BMP"
        }
    }

    /// The usual file extension, without a dot: "jpg", "png", "webp", "avif", "tif", "heic", "gif" or "bmp".
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        case .avif: "avif"
        case .tiff: "tif"
        case .heif: "heic"
        case .gif: "gif"
        case .bmp: "bmp"
        }
    }

    /// The media type: "image/jpeg", "image/png", "image/webp", "image/avif", "image/tiff", "image/heif",
    /// "image/gif" or "image/bmp".
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .tiff: "image/tiff"
        case .heif: "image/heif"
        case .gif: "image/gif"
        case .bmp: "image/bmp"
        }
    }

    /// The format of a media type written by `mediaType` (nil for any other).
    public init?(mediaType: String) {
        guard let format = Self.allCases.first(where: { $0.mediaType == mediaType.lowercased() }) else { return nil }
        self = format
    }

    /// The formats written, by name, for messages: "jpeg, png, webp, avif, tiff".
    public static var names: String { writable.map(\.rawValue).joined(separator: ", ") }

    /// What the formats read are called in messages about data that is none of them:
    /// "JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP".
    package static let readableNames = "JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP"

    /// Describes the first bytes of data that is not a supported image, for error messages:
    /// `not a JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP image (starts with '<!DO')`.
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
