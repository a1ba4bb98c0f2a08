#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where encoded image bytes come from: memory, or a file read as the image streams through (so that a
/// large image is never whole in memory, encoded or decoded).
enum ImageSource {
    /// Bytes that stay valid while the source is in use.
    case memory(UnsafeBufferPointer<UInt8>)
    /// A file open for reading, positioned at its start; read once, front to back.
    case file(UnsafeMutablePointer<FILE>)

    /// The format, from the first bytes (the file is rewound afterwards).
    func sniffFormat() throws -> ImageFormat {
        switch self {
        case .memory(let bytes):
            guard let format = ImageFormat(sniffing: bytes) else {
                throw ImagingError(.decode, ImageFormat.unrecognisedMessage(bytes))
            }
            return format
        case .file(let file):
            var head = [UInt8](repeating: 0, count: 16)
            let count = fread(&head, 1, head.count, file)
            rewind(file)
            let bytes = head.prefix(count)
            guard let format = ImageFormat(sniffing: bytes) else {
                throw ImagingError(.decode, ImageFormat.unrecognisedMessage(bytes))
            }
            return format
        }
    }
}

/// Where encoded bytes go: collected in memory, or written to a file as they are produced.
enum ImageDestination {
    case memory
    case file(UnsafeMutablePointer<FILE>)

    var file: UnsafeMutablePointer<FILE>? {
        if case .file(let file) = self { return file }
        return nil
    }
}
