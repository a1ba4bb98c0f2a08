import CImageCodecs

/// JPEG through libjpeg-turbo: gray stays gray, RGB is stored as YCbCr 4:2:0, RGBA is composited over white.
final class JPEGRowEncoder: RowEncoder {
    private let encoder: OpaquePointer
    private let rowBytes: Int
    private var message = [CChar](repeating: 0, count: 512)

    init(width: Int, height: Int, channels: Int, quality: Int, metadata: ImageMetadata = .none,
         destination: ImageDestination) throws {
        var opening = [CChar](repeating: 0, count: 512)
        guard let opened = metadata.withUnsafeMetadata({ metadata in
            sw_jpeg_encoder_open(
                Int32(clamping: width), Int32(clamping: height), Int32(channels), Int32(max(1, min(100, quality))),
                destination.file, metadata, &opening, opening.count)
        })
        else { throw ImagingError(.processing, "cannot encode JPEG: \(CodecMessage.string(opening))") }
        self.encoder = opened
        self.rowBytes = width * channels
    }

    /// An encoder of raw Y'CbCr planes laid out as `planes` (the decoder's: the sampling is kept).
    init(width: Int, height: Int, planes: sw_jpeg_planes, quality: Int, metadata: ImageMetadata = .none,
         destination: ImageDestination) throws {
        var opening = [CChar](repeating: 0, count: 512)
        var planes = planes
        guard let opened = metadata.withUnsafeMetadata({ metadata in
            sw_jpeg_encoder_open_planes(
                Int32(clamping: width), Int32(clamping: height), &planes, Int32(max(1, min(100, quality))),
                destination.file, metadata, &opening, opening.count)
        })
        else { throw ImagingError(.processing, "cannot encode JPEG: \(CodecMessage.string(opening))") }
        self.encoder = opened
        self.rowBytes = 0
    }

    deinit { sw_jpeg_encoder_close(encoder) }

    /// Encodes the next group of plane rows (`sw_jpeg_planes.group_rows`, padding filled in).
    func writePlanes(_ buffers: [UnsafeMutablePointer<UInt8>], strides: [Int], token: CancellationToken) throws {
        var pointers: [UnsafeMutablePointer<UInt8>?] = buffers
        let status = token.withCodecCallback { cancel in
            sw_jpeg_encoder_write_planes(encoder, &pointers, strides, cancel, &message, message.count)
        }
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
    }

    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws {
        let status = token.withCodecCallback { cancel in
            sw_jpeg_encoder_write(encoder, pixels, rowBytes, Int32(rows), cancel, &message, message.count)
        }
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
    }

    func finish(token: CancellationToken) throws -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = sw_jpeg_encoder_finish(encoder, &output, &size, &message, message.count)
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
        return RowEncoders.take(output, size: size)
    }
}
