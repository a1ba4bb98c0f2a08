/// Where a 16-bit image goes (issue #32: 16 bits kept): which output formats keep its depth (PNG, TIFF, AVIF), the encoder for
/// each, and what the result says when the depth is lost.
enum DeepOutput {
    /// Whether `format` keeps a 16-bit input's depth, as far as it can: PNG and TIFF at 16 bits, AVIF at 10 or 12 (its
    /// most). JPEG and WebP hold 8 bits: they get the image dithered to 8 bits, with `warning(for:)`.
    static func keepsSixteenBits(_ format: ImageFormat) -> Bool {
        format == .png || format == .tiff || format == .avif
    }

    /// The depth an AVIF is written at from 16-bit rows: an AVIF input's own (10 or 12), else 12.
    static func avifDepth(sourceBits: Int) -> Int {
        sourceBits == 10 ? 10 : 12
    }

    /// What the result says when a 16-bit input is written as `format` at 8 bits; nil when the depth is kept.
    static func warning(for format: ImageFormat) -> String? {
        if keepsSixteenBits(format) { return nil }
        return
            "16-bit input written as 8-bit \(format.displayName), dithered (\(format.displayName) holds 8 bits a sample; "
            + "choose --format png, tiff or avif to keep the depth)"
    }

    /// The encoder for 16-bit rows as `format`: PNG and TIFF at 16 bits, AVIF at `avifDepth(sourceBits:)`, any other
    /// format through `DitheringRowEncoder` at 8.
    static func encoder(
        _ format: ImageFormat, width: Int, height: Int, channels: Int, encoding: EncodingOptions,
        metadata: ImageMetadata, sourceBits: Int, destination: ImageDestination
    ) throws -> RowEncoder {
        switch format {
        case .png:
            return try PNGRowEncoder(
                width: width, height: height, channels: channels, level: encoding.pngCompressionLevel,
                metadata: metadata, bitsPerSample: 16, destination: destination)
        case .tiff:
            return try TIFFRowEncoder(
                width: width, height: height, channels: channels, metadata: metadata, bitsPerSample: 16,
                destination: destination)
        case .avif:
            return try WholePictureEncoder(
                .avif, width: width, height: height, channels: channels,
                quality: encoding.quality(for: .avif), metadata: metadata,
                avifDepth: avifDepth(sourceBits: sourceBits), destination: destination)
        default:
            let eight = try RowEncoders.open(
                format, width: width, height: height, channels: channels, encoding: encoding,
                metadata: metadata, destination: destination)
            return DitheringRowEncoder(eight, width: width, channels: channels)
        }
    }
}
