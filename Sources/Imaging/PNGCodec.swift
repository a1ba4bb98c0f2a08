import CImageCodecs
import Runtime

/// PNG decoding through libpng, encoding through our ISA-L encoder or libpng (via the CImageCodecs shim).
public enum PNGCodec {
    /// The zlib level used by default: 3, with the Up row filter.
    ///
    /// Levels 1…3 are served by our own encoder (ISA-L's igzip at its level 1: six times faster than zlib at
    /// level 3 on a photograph, files about 4 % larger); 0 and 4…9 by libpng with zlib at that level.
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
    public static func decode(
        _ data: [UInt8], limits: ImageLimits = .default, cancellation: CancellationFlag? = nil
    ) throws -> ImageBuffer {
        try CancellationToken.with(cancellation) { token in try decode(data, limits: limits, token: token) }
    }

    static func decode(_ data: [UInt8], limits: ImageLimits, token: CancellationToken) throws -> ImageBuffer {
        try data.withUnsafeBufferPointer { bytes in
            try PNGRowDecoder(.memory(bytes), limits: limits).readWhole(token: token)
        }
    }

    /// Encodes 8-bit gray, RGB or RGBA, every row with the Up filter (see `defaultCompressionLevel` for what
    /// each level uses).
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func encode(
        _ image: ImageBuffer, compressionLevel: Int = defaultCompressionLevel,
        cancellation: CancellationFlag? = nil
    ) throws -> [UInt8] {
        try CancellationToken.with(cancellation) { token in
            try encode(image, compressionLevel: compressionLevel, token: token)
        }
    }

    static func encode(_ image: ImageBuffer, compressionLevel: Int, token: CancellationToken) throws -> [UInt8] {
        let encoder = try PNGRowEncoder(
            width: image.width, height: image.height, channels: image.channels,
            level: compressionLevel, destination: .memory)
        return try encoder.encode(image, token: token)
    }
}
