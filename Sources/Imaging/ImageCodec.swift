/// Format-independent decoding (by magic bytes) and encoding.
public enum ImageCodec {
    /// Decodes JPEG or PNG data, recognised by its magic bytes; applies the EXIF orientation.
    public static func decode(_ data: [UInt8], limits: ImageLimits = .default) throws -> (image: ImageBuffer, format: ImageFormat) {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImagingError(.decode, ImageFormat.unrecognisedMessage(data))
        }
        switch format {
        case .jpeg: return (try JPEGCodec.decode(data, limits: limits), .jpeg)
        case .png: return (try PNGCodec.decode(data, limits: limits), .png)
        }
    }

    /// Encodes `image` as `format`.
    public static func encode(_ image: ImageBuffer, as format: ImageFormat, jpegQuality: Int = 90,
                              pngCompressionLevel: Int = PNGCodec.defaultCompressionLevel) throws -> [UInt8] {
        switch format {
        case .jpeg: try JPEGCodec.encode(image, quality: jpegQuality)
        case .png: try PNGCodec.encode(image, compressionLevel: pngCompressionLevel)
        }
    }
}
