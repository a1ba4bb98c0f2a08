import CImageCodecs
import Operations

/// JPEG decoding and encoding through libjpeg-turbo (via the CImageCodecs shim).
public enum JPEGCodec {
    /// Decodes a JPEG: gray stays gray, YCbCr becomes RGB, CMYK/YCCK is converted to RGB (naively, without
    /// a colour profile). The EXIF orientation is applied unless `applyOrientation` is false.
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func decode(_ data: [UInt8], limits: ImageLimits = .default, applyOrientation: Bool = true,
                              cancellation: CancellationFlag? = nil) throws -> ImageBuffer {
        try CancellationToken.with(cancellation) { token in
            try decode(data, limits: limits, applyOrientation: applyOrientation, token: token)
        }
    }

    static func decode(_ data: [UInt8], limits: ImageLimits, applyOrientation: Bool, token: CancellationToken) throws -> ImageBuffer {
        try limits.checkBytes(data.count)
        var message = [CChar](repeating: 0, count: 512)
        return try data.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                throw ImagingError(.decode, "not a JPEG image (the data is empty)")
            }
            var info = sw_image_info()
            guard let decoder = sw_jpeg_open(base, bytes.count, &info, &message, message.count) else {
                throw ImagingError(.decode, "cannot read JPEG: \(CodecMessage.string(message))")
            }
            defer { sw_jpeg_close(decoder) }
            try limits.checkPixels(width: Int(info.width), height: Int(info.height))
            let image = try ImageBuffer(width: Int(info.width), height: Int(info.height), channels: Int(info.channels)) { pixels in
                guard let out = pixels.baseAddress else { return }
                let status = token.withCodecCallback { cancel in
                    sw_jpeg_read(decoder, out, Int(info.width) * Int(info.channels), cancel, &message, message.count)
                }
                try CodecStatus.check(status, .decode, "cannot read JPEG", message: message)
            }
            return applyOrientation ? image.oriented(exifOrientation: Int(info.orientation)) : image
        }
    }

    /// Encodes at `quality` (1…100). RGBA is composited over white (JPEG has no alpha).
    /// Stops with `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func encode(_ image: ImageBuffer, quality: Int = 90, cancellation: CancellationFlag? = nil) throws -> [UInt8] {
        try CancellationToken.with(cancellation) { token in try encode(image, quality: quality, token: token) }
    }

    static func encode(_ image: ImageBuffer, quality: Int, token: CancellationToken) throws -> [UInt8] {
        let source = image.channels == 4 ? image.converted(toChannels: 3) : image
        var message = [CChar](repeating: 0, count: 512)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = source.pixels.withUnsafeBufferPointer { pixels in
            token.withCodecCallback { cancel in
                sw_jpeg_encode(
                    pixels.baseAddress, Int32(source.width), Int32(source.height), Int32(source.channels), source.rowBytes,
                    Int32(max(1, min(100, quality))), cancel, &output, &size, &message, message.count)
            }
        }
        try CodecStatus.check(status, .processing, "cannot encode JPEG", message: message)
        guard let output else { throw ImagingError(.processing, "cannot encode JPEG: the encoder returned no data") }
        defer { sw_codec_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}

enum CodecMessage {
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.isEmpty ? "unknown error" : text
    }
}
