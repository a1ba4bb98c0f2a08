import CImageCodecs

/// PNG, 8 bits per channel, every row with the Up filter (see `PNGCodec.defaultCompressionLevel`).
///
/// The fast levels (1…3, the default 3 among them) go through our own encoder (`png_fast.c`: ISA-L's igzip,
/// about six times faster than zlib at level 3 for files a few per cent larger); level 0 and the slow levels
/// 4…9 through libpng and zlib at that level.
final class PNGRowEncoder: RowEncoder {
    /// The C encoder: ours or libpng's.
    private enum Encoder {
        case fast(OpaquePointer)
        case libpng(OpaquePointer)
    }

    private let encoder: Encoder
    private let rowBytes: Int
    private var message = [CChar](repeating: 0, count: 512)

    /// The zlib levels that our ISA-L encoder serves.
    static let fastLevels = 1...3

    /// `metadata`: the ICC profile and EXIF are written (iCCP, eXIf); PNG has no place here for the rest.
    init(width: Int, height: Int, channels: Int, level: Int, metadata: ImageMetadata = .none,
         destination: ImageDestination) throws {
        var opening = [CChar](repeating: 0, count: 512)
        let (w, h) = (Int32(clamping: width), Int32(clamping: height))
        if Self.fastLevels.contains(level) {
            guard let opened = metadata.withUnsafeMetadata({ metadata in
                sw_png_fast_encoder_open(w, h, Int32(channels), destination.file, metadata, &opening, opening.count)
            }) else { throw ImagingError(.processing, "cannot encode PNG: \(CodecMessage.string(opening))") }
            self.encoder = .fast(opened)
        } else {
            guard let opened = metadata.withUnsafeMetadata({ metadata in
                sw_png_encoder_open(
                    w, h, Int32(channels), Int32(level), SW_PNG_FILTER_UP, destination.file, metadata, &opening, opening.count)
            }) else { throw ImagingError(.processing, "cannot encode PNG: \(CodecMessage.string(opening))") }
            self.encoder = .libpng(opened)
        }
        self.rowBytes = width * channels
    }

    deinit {
        switch encoder {
        case .fast(let e): sw_png_fast_encoder_close(e)
        case .libpng(let e): sw_png_encoder_close(e)
        }
    }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            switch encoder {
            case .fast(let e): sw_png_fast_encoder_write(e, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
            case .libpng(let e): sw_png_encoder_write(e, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
            }
        }
        try CodecStatus.check(status, .processing, "cannot encode PNG", message: message)
    }

    func finish(token: CancellationToken) throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = switch encoder {
        case .fast(let e): sw_png_fast_encoder_finish(e, &output, &size, &message, message.count)
        case .libpng(let e): sw_png_encoder_finish(e, &output, &size, &message, message.count)
        }
        try CodecStatus.check(status, .processing, "cannot encode PNG", message: message)
        return RowEncoders.take(output, size: size)
    }
}
