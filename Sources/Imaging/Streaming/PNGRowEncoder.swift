import CImageCodecs

/// PNG through libpng, 8 bits per channel, every row with the given zlib level and the Up filter (see
/// `PNGCodec.defaultCompressionLevel`).
final class PNGRowEncoder: RowEncoder {
    private let encoder: OpaquePointer
    private let rowBytes: Int
    private var message = [CChar](repeating: 0, count: 512)

    init(width: Int, height: Int, channels: Int, level: Int, destination: ImageDestination) throws {
        guard let opened = sw_png_encoder_open(
            Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(level), SW_PNG_FILTER_UP,
            destination.file, &message, message.count)
        else { throw ImagingError(.processing, "cannot encode PNG: \(CodecMessage.string(message))") }
        self.encoder = opened
        self.rowBytes = width * channels
    }

    deinit { sw_png_encoder_close(encoder) }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_png_encoder_write(encoder, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .processing, "cannot encode PNG", message: message)
    }

    func finish() throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = sw_png_encoder_finish(encoder, &output, &size, &message, message.count)
        try CodecStatus.check(status, .processing, "cannot encode PNG", message: message)
        return RowEncoders.take(output, size: size)
    }
}
