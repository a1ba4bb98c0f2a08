import CImageCodecs
import Runtime

/// Format-independent decoding (by magic bytes) and encoding.
public enum ImageCodec {
    /// Decodes JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP data, recognised by its magic bytes; applies the EXIF
    /// (TIFF: Orientation tag) orientation. Stops with
    /// `ImagingError` `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func decode(
        _ data: [UInt8], limits: ImageLimits = .default,
        cancellation: CancellationFlag? = nil
    ) throws -> (image: ImageBuffer, format: ImageFormat) {
        try CancellationToken.with(cancellation) { token in try decode(data, limits: limits, token: token) }
    }

    /// Encodes `image` as `format` (`jpegQuality` serves JPEG; WebP and AVIF take their quality from `options`,
    /// which `encode(_:options:)` uses whole). Stops with `ImagingError` `.cancelled` when `cancellation` is raised or
    /// the current task is cancelled.
    public static func encode(
        _ image: ImageBuffer, as format: ImageFormat, jpegQuality: Int = 90,
        pngCompressionLevel: Int = PNGCodec.defaultCompressionLevel,
        cancellation: CancellationFlag? = nil
    ) throws -> [UInt8] {
        try CancellationToken.with(cancellation) { token in
            try encode(
                image, as: format, jpegQuality: jpegQuality, pngCompressionLevel: pngCompressionLevel, token: token)
        }
    }

    static func decode(
        _ data: [UInt8], limits: ImageLimits, token: CancellationToken
    ) throws -> (image: ImageBuffer, format: ImageFormat) {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImagingError(.decode, ImageFormat.unrecognisedMessage(data))
        }
        switch format {
        case .jpeg: return (try JPEGCodec.decode(data, limits: limits, applyOrientation: true, token: token), .jpeg)
        case .png: return (try PNGCodec.decode(data, limits: limits, token: token), .png)
        case .webp, .avif, .heif, .gif:
            return try data.withUnsafeBufferPointer { bytes in
                let decoder = try WholePictureDecoder(format, .memory(bytes), limits: limits)
                return (try decoder.readImage(token: token).oriented(exifOrientation: decoder.orientation), format)
            }
        case .tiff:
            return try data.withUnsafeBufferPointer { bytes in
                let decoder = try TIFFRowDecoder(.memory(bytes), limits: limits)
                return (try decoder.readImage(token: token).oriented(exifOrientation: decoder.orientation), format)
            }
        case .bmp:
            return try data.withUnsafeBufferPointer { bytes in
                (try BMPRowDecoder(.memory(bytes), limits: limits).readImage(token: token), format)
            }
        }
    }

    static func encode(
        _ image: ImageBuffer, as format: ImageFormat, jpegQuality: Int, pngCompressionLevel: Int,
        token: CancellationToken
    ) throws -> [UInt8] {
        let options = EncodingOptions(
            format: format, jpegQuality: jpegQuality, pngCompressionLevel: pngCompressionLevel)
        return try encode(image, as: format, options: options, token: token)
    }

    /// Encodes `image` as `options.format` (JPEG when nil) at the quality `options` gives that format.
    public static func encode(
        _ image: ImageBuffer, options: EncodingOptions, cancellation: CancellationFlag? = nil
    ) throws -> [UInt8] {
        let options = try options.validated()
        return try CancellationToken.with(cancellation) { token in
            try encode(image, as: options.format ?? .jpeg, options: options, token: token)
        }
    }

    static func encode(
        _ image: ImageBuffer, as format: ImageFormat, options: EncodingOptions, token: CancellationToken
    ) throws -> [UInt8] {
        switch format {
        case .jpeg: return try JPEGCodec.encode(image, quality: options.jpegQuality, token: token)
        case .png: return try PNGCodec.encode(image, compressionLevel: options.pngCompressionLevel, token: token)
        case .webp, .avif:
            let encoder = try WholePictureEncoder(
                format, width: image.width, height: image.height, channels: image.channels,
                quality: options.quality(for: format), destination: .memory)
            return try encoder.encode(image, token: token)
        case .tiff:
            return try TIFFRowEncoder(
                width: image.width, height: image.height, channels: image.channels, destination: .memory
            )
            .encode(image, token: token)
        case .heif, .gif, .bmp:
            throw ImagingError.notWritable(format)
        }
    }
}

/// What a codec's C call returned, as a Swift error when it did not succeed.
enum CodecStatus {
    /// Throws for `SW_CODEC_CANCELLED` (`.cancelled`) and any other failure (`kind`, with the message).
    static func check(_ status: Int32, _ kind: ImagingError.Kind, _ what: String, message: [CChar]) throws {
        switch status {
        case SW_CODEC_OK: return
        case SW_CODEC_CANCELLED: throw ImagingError.cancelledError
        default: throw ImagingError(kind, "\(what): \(CodecMessage.string(message))")
        }
    }
}
