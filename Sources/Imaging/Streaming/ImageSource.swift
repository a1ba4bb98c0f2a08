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

/// A C decoder just opened on an ``ImageSource``: its handle (the caller closes it), the header it read and the
/// metadata it found.
struct OpenedDecoder {
    let handle: OpaquePointer
    let info: sw_image_info
    let metadata: ImageMetadata

    var width: Int { Int(info.width) }
    var height: Int { Int(info.height) }
    var channels: Int { Int(info.channels) }
    var orientation: Int { Int(info.orientation) }
}

extension ImageSource {
    /// Opens a C decoder on this source and reads its header and metadata: `memory(bytes, count, info, message,
    /// capacity)` for bytes (after the byte limit), `file(file, info, message, capacity)` for a file, then
    /// `metadata(decoder, metadata)`. Throws `.decode`, naming `what` and the C message. The pixel limit is the
    /// caller's to check, once it owns the handle.
    func openDecoder(
        _ what: String, limits: ImageLimits,
        memory: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<sw_image_info>, UnsafeMutablePointer<CChar>, Int) ->
            OpaquePointer?,
        file: (UnsafeMutablePointer<FILE>, UnsafeMutablePointer<sw_image_info>, UnsafeMutablePointer<CChar>, Int) ->
            OpaquePointer?,
        metadata: (OpaquePointer, UnsafeMutablePointer<sw_image_metadata>) -> Void
    ) throws -> OpenedDecoder {
        var message = [CChar](repeating: 0, count: 512)
        var info = sw_image_info()
        let opened: OpaquePointer?
        switch self {
        case .memory(let bytes):
            try limits.checkBytes(bytes.count)
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                throw ImagingError(.decode, "not a \(what) image (the data is empty)")
            }
            opened = message.withUnsafeMutableBufferPointer { m in
                m.baseAddress.flatMap { memory(base, bytes.count, &info, $0, m.count) }
            }
        case .file(let handle):
            opened = message.withUnsafeMutableBufferPointer { m in
                m.baseAddress.flatMap { file(handle, &info, $0, m.count) }
            }
        }
        guard let opened else { throw ImagingError(.decode, "cannot read \(what): \(CodecMessage.string(message))") }
        var found = sw_image_metadata()
        metadata(opened, &found)
        return OpenedDecoder(handle: opened, info: info, metadata: ImageMetadata(found))
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
