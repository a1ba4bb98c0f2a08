import CImageCodecs
import Runtime

/// JPEG decoding and encoding through libjpeg-turbo (via the CImageCodecs shim).
public enum JPEGCodec {
    /// Decodes a JPEG: gray stays gray, YCbCr becomes RGB, CMYK/YCCK is converted to sRGB through its ICC
    /// profile (naively, R = (1−C)(1−K)…, when it has none). The EXIF orientation is applied unless `applyOrientation` is false.
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func decode(
        _ data: [UInt8], limits: ImageLimits = .default, applyOrientation: Bool = true,
        cancellation: CancellationFlag? = nil
    ) throws -> ImageBuffer {
        try CancellationToken.with(cancellation) { token in
            try decode(data, limits: limits, applyOrientation: applyOrientation, token: token)
        }
    }

    static func decode(
        _ data: [UInt8], limits: ImageLimits, applyOrientation: Bool, token: CancellationToken
    ) throws -> ImageBuffer {
        try data.withUnsafeBufferPointer { bytes in
            let decoder = try JPEGRowDecoder(.memory(bytes), limits: limits)
            // CMYK through its profile, when it has a usable one (as in the pipeline).
            let image = try ColourManagement.manage(decoder, policy: .keep).decoder.readImage(token: token)
            return applyOrientation ? image.oriented(exifOrientation: decoder.orientation) : image
        }
    }

    /// Encodes at `quality` (1…100). RGBA is composited over white (JPEG has no alpha).
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func encode(
        _ image: ImageBuffer, quality: Int = 90, cancellation: CancellationFlag? = nil
    ) throws -> [UInt8] {
        try CancellationToken.with(cancellation) { token in try encode(image, quality: quality, token: token) }
    }

    static func encode(_ image: ImageBuffer, quality: Int, token: CancellationToken) throws -> [UInt8] {
        let encoder = try JPEGRowEncoder(
            width: image.width, height: image.height, channels: image.channels,
            quality: quality, destination: .memory)
        return try encoder.encode(image, token: token)
    }
}

enum CodecMessage {
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.isEmpty ? "unknown error" : text
    }
}
