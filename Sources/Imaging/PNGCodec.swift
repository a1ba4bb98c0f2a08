import CImageCodecs
import Operations

/// PNG decoding and encoding through libpng (via the CImageCodecs shim).
public enum PNGCodec {
    /// The zlib level used by default: 3, with the Up row filter.
    ///
    /// Measured here on a 2.5-megapixel photograph (one core): libpng's defaults (level 6, adaptive filter
    /// choice) encode at 6 MP/s into 1.67 MB; level 3 with Paeth at 17 MP/s into 1.96 MB; level 3 with Up at
    /// 26 MP/s into 1.99 MB; level 1 with Up at 41 MP/s into 2.15 MB. Level 3 + Up is four times faster than
    /// the defaults for files a fifth larger (photographs are noisy: deflate finds few long matches whatever
    /// it tries). At level 6 saving a tilt-shifted photo as PNG would cost far more than decoding and
    /// filtering it.
    public static let defaultCompressionLevel = 3

    /// Decodes a PNG: palette, gray below 8 bits and tRNS are expanded; 16-bit samples are scaled to 8 bits;
    /// gray+alpha becomes RGBA; interlaced (Adam7) images are de-interlaced.
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func decode(_ data: [UInt8], limits: ImageLimits = .default, cancellation: CancellationFlag? = nil) throws -> ImageBuffer {
        try CancellationToken.with(cancellation) { token in try decode(data, limits: limits, token: token) }
    }

    static func decode(_ data: [UInt8], limits: ImageLimits, token: CancellationToken) throws -> ImageBuffer {
        try limits.checkBytes(data.count)
        var message = [CChar](repeating: 0, count: 512)
        return try data.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                throw ImagingError(.decode, "not a PNG image (the data is empty)")
            }
            var info = sw_image_info()
            guard let decoder = sw_png_open(base, bytes.count, &info, &message, message.count) else {
                throw ImagingError(.decode, "cannot read PNG: \(CodecMessage.string(message))")
            }
            defer { sw_png_close(decoder) }
            try limits.checkPixels(width: Int(info.width), height: Int(info.height))
            return try ImageBuffer(width: Int(info.width), height: Int(info.height), channels: Int(info.channels)) { pixels in
                guard let out = pixels.baseAddress else { return }
                let status = token.withCodecCallback { cancel in
                    sw_png_read(decoder, out, Int(info.width) * Int(info.channels), cancel, &message, message.count)
                }
                try CodecStatus.check(status, .decode, "cannot read PNG", message: message)
            }
        }
    }

    /// Encodes 8-bit gray, RGB or RGBA, every row with the Up filter (see `defaultCompressionLevel`).
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func encode(_ image: ImageBuffer, compressionLevel: Int = defaultCompressionLevel,
                              cancellation: CancellationFlag? = nil) throws -> [UInt8] {
        try CancellationToken.with(cancellation) { token in try encode(image, compressionLevel: compressionLevel, token: token) }
    }

    static func encode(_ image: ImageBuffer, compressionLevel: Int, token: CancellationToken) throws -> [UInt8] {
        var message = [CChar](repeating: 0, count: 512)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            token.withCodecCallback { cancel in
                sw_png_encode(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels), image.rowBytes,
                    Int32(compressionLevel), SW_PNG_FILTER_UP, cancel, &output, &size, &message, message.count)
            }
        }
        try CodecStatus.check(status, .processing, "cannot encode PNG", message: message)
        guard let output else { throw ImagingError(.processing, "cannot encode PNG: the encoder returned no data") }
        defer { sw_codec_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
