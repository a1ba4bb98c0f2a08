/// An image still in its file format (JPEG, PNG, WebP, AVIF, HEIF, TIFF, GIF or BMP bytes), with the format recognised from its magic
/// bytes: what a fetch produces and a ``TiltShiftOperation`` consumes.
public struct EncodedImage: Sendable {
    /// The encoded bytes.
    public let data: [UInt8]
    /// The format, as recognised by ``ImageFormat/init(sniffing:)``.
    public let format: ImageFormat

    /// Wraps `data`, whose format is already known to be `format`.
    public init(data: [UInt8], format: ImageFormat) {
        self.data = data
        self.format = format
    }
}
