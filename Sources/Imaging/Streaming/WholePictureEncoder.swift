import CImageCodecs

/// WebP (libwebp) or AVIF (libavif), which encode a whole picture: the rows written are collected
/// (`width × height × 3` bytes, 4 with alpha; gray is widened to RGB) and encoded in `finish`, where the rows are
/// freed as soon as the library holds its own Y'CbCr copy. The memory this takes is bounded by the pixel limit
/// (`ImageLimits.maxPixels`), like the decoders', not by the streaming window. The ICC profile, EXIF (orientation
/// reset to 1) and XMP are written (WebP's ICCP/EXIF/XMP chunks, AVIF's colr/Exif/XMP items).
final class WholePictureEncoder: RowEncoder {
    private enum Encoder {
        case webp(OpaquePointer)
        case avif(OpaquePointer)
    }

    private let encoder: Encoder
    private let rowBytes: Int
    private let name: String
    private var message = [CChar](repeating: 0, count: 512)

    /// `format` is `.webp` or `.avif`; `quality` 1…100.
    init(_ format: ImageFormat, width: Int, height: Int, channels: Int, quality: Int, metadata: ImageMetadata = .none,
         destination: ImageDestination) throws {
        var opening = [CChar](repeating: 0, count: 512)
        let (w, h, c, q) = (Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(max(1, min(100, quality))))
        switch format {
        case .webp:
            name = "WebP"
            guard let opened = metadata.withUnsafeMetadata({ sw_webp_encoder_open(w, h, c, q, destination.file, $0, &opening, opening.count) })
            else { throw ImagingError(.processing, "cannot encode WebP: \(CodecMessage.string(opening))") }
            encoder = .webp(opened)
        case .avif:
            name = "AVIF"
            guard let opened = metadata.withUnsafeMetadata({ sw_avif_encoder_open(w, h, c, q, destination.file, $0, &opening, opening.count) })
            else { throw ImagingError(.processing, "cannot encode AVIF: \(CodecMessage.string(opening))") }
            encoder = .avif(opened)
        case .jpeg, .png:
            throw ImagingError(.processing, "\(format.rawValue) is encoded row by row, not as a whole picture")
        }
        rowBytes = width * channels
    }

    deinit {
        switch encoder {
        case .webp(let e): sw_webp_encoder_close(e)
        case .avif(let e): sw_avif_encoder_close(e)
        }
    }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            switch encoder {
            case .webp(let e): sw_webp_encoder_write(e, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
            case .avif(let e): sw_avif_encoder_write(e, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
            }
        }
        try CodecStatus.check(status, .processing, "cannot encode \(name)", message: message)
    }

    func finish(token: CancellationToken) throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = token.withCodecCallback { cancel in
            switch encoder {
            case .webp(let e): sw_webp_encoder_finish(e, cancel, &output, &size, &message, message.count)
            case .avif(let e): sw_avif_encoder_finish(e, cancel, &output, &size, &message, message.count)
            }
        }
        try CodecStatus.check(status, .processing, "cannot encode \(name)", message: message)
        return RowEncoders.take(output, size: size)
    }
}
