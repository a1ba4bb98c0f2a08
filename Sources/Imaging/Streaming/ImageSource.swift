import CImageCodecs

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
            var head = [UInt8](repeating: 0, count: ImageFormat.sniffedBytes)
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

extension ImageSource {
    /// Opens a C decoder on this source: `memory(bytes, count, message, capacity)` for bytes (after the byte
    /// limit), `file(file, message, capacity)` for a file. Throws `.decode`, naming `what` and the C message.
    func openDecoder(
        _ what: String, limits: ImageLimits,
        memory: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?,
        file: (UnsafeMutablePointer<FILE>, UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?
    ) throws -> OpaquePointer {
        var message = [CChar](repeating: 0, count: 512)
        let opened: OpaquePointer?
        switch self {
        case .memory(let bytes):
            try limits.checkBytes(bytes.count)
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                throw ImagingError(.decode, "not a \(what) image (the data is empty)")
            }
            opened = message.withUnsafeMutableBufferPointer { m in m.baseAddress.flatMap { memory(base, bytes.count, $0, m.count) } }
        case .file(let handle):
            opened = message.withUnsafeMutableBufferPointer { m in m.baseAddress.flatMap { file(handle, $0, m.count) } }
        }
        guard let opened else { throw ImagingError(.decode, "cannot read \(what): \(CodecMessage.string(message))") }
        return opened
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
