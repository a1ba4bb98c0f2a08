/// Where a 16-bit image goes (issue #32: 16 bits kept): which output formats keep its depth, the encoder for
/// each, and what the result says when the depth is lost.
enum DeepOutput {
    /// Whether `format` is written at 16 bits from a 16-bit input: PNG and TIFF. JPEG and WebP hold 8 bits; AVIF's 10
    /// and 12-bit modes are not written yet; these get the image dithered to 8 bits, with `warning(for:)`.
    static func keepsSixteenBits(_ format: ImageFormat) -> Bool {
        format == .png || format == .tiff
    }

    /// What the result says when a 16-bit input is written as `format` at 8 bits; nil when the depth is kept.
    static func warning(for format: ImageFormat) -> String? {
        if keepsSixteenBits(format) { return nil }
        let reason = format == .avif ? "AVIF is written at 8 bits here" : "\(format.displayName) holds 8 bits a sample"
        return "16-bit input written as 8-bit \(format.displayName), dithered (\(reason); choose --format png or tiff to keep 16 bits)"
    }

    /// The encoder for 16-bit rows as `format`: PNG and TIFF at 16 bits, any other format through
    /// `DitheringRowEncoder` at 8.
    static func encoder(_ format: ImageFormat, width: Int, height: Int, channels: Int, encoding: EncodingOptions,
                        metadata: ImageMetadata, destination: ImageDestination) throws -> RowEncoder {
        switch format {
        case .png:
            return try PNGRowEncoder(width: width, height: height, channels: channels, level: encoding.pngCompressionLevel,
                                     metadata: metadata, bitsPerSample: 16, destination: destination)
        case .tiff:
            return try TIFFRowEncoder(width: width, height: height, channels: channels, metadata: metadata, bitsPerSample: 16,
                                      destination: destination)
        default:
            let eight = try RowEncoders.open(format, width: width, height: height, channels: channels, encoding: encoding,
                                             metadata: metadata, destination: destination)
            return DitheringRowEncoder(eight, width: width, channels: channels)
        }
    }
}
