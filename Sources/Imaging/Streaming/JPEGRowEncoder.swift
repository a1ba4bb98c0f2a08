import CImageCodecs

/// JPEG through libjpeg-turbo: gray stays gray, RGB is stored as YCbCr 4:2:0, RGBA is composited over white.
final class JPEGRowEncoder: RowEncoder {
    private let encoder: OpaquePointer
    private let rowBytes: Int
    private var message = [CChar](repeating: 0, count: 512)

    init(width: Int, height: Int, channels: Int, quality: Int, destination: ImageDestination) throws {
        guard let opened = sw_jpeg_encoder_open(
            Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(max(1, min(100, quality))),
            destination.file, &message, message.count)
        else { throw ImagingError(.processing, "cannot encode JPEG: \(CodecMessage.string(message))") }
        self.encoder = opened
        self.rowBytes = width * channels
    }

    deinit { sw_jpeg_encoder_close(encoder) }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_jpeg_encoder_write(encoder, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
    }

    func finish() throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = sw_jpeg_encoder_finish(encoder, &output, &size, &message, message.count)
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
        return RowEncoders.take(output, size: size)
    }
}
