import CImageCodecs

/// An encoder that takes an image's rows top to bottom and writes them out as it goes.
protocol RowEncoder: AnyObject {
    /// Encodes the next `rows` rows (`width * channels` bytes a row, no padding).
    func write(_ pixels: UnsafePointer<UInt8>, rows: Int, token: CancellationToken) throws
    /// Ends the image: the encoded bytes when encoding to memory, nil when written to a file. (Encoders of whole
    /// pictures do their work here, and check `token`.)
    func finish(token: CancellationToken) throws -> [UInt8]?
}

enum RowEncoders {
    /// An encoder for `width`×`height` rows of `channels` (1, 3 or 4) as `format` into `destination`. JPEG, PNG and
    /// TIFF encode the rows as they come; WebP and AVIF collect them and encode the whole picture at the end
    /// (`WholePictureEncoder`). With `bitsPerSample` 16 the rows are 16-bit: PNG and TIFF keep them, AVIF at 10 or 12
    /// bits (`sourceBits`: the input's depth; `DeepOutput`), the others get them dithered to 8 bits (`DitheringRowEncoder`).
    static func open(
        _ format: ImageFormat, width: Int, height: Int, channels: Int, encoding: EncodingOptions,
        metadata: ImageMetadata, bitsPerSample: Int = 8, sourceBits: Int = 16,
        destination: ImageDestination
    ) throws -> RowEncoder {
        if bitsPerSample == 16 {
            return try DeepOutput.encoder(
                format, width: width, height: height, channels: channels, encoding: encoding,
                metadata: metadata, sourceBits: sourceBits, destination: destination)
        }
        switch format {
        case .jpeg:
            return try JPEGRowEncoder(
                width: width, height: height, channels: channels, quality: encoding.jpegQuality,
                metadata: metadata, destination: destination)
        case .png:
            return try PNGRowEncoder(
                width: width, height: height, channels: channels, level: encoding.pngCompressionLevel,
                metadata: metadata, destination: destination)
        case .webp, .avif:
            return try WholePictureEncoder(
                format, width: width, height: height, channels: channels,
                quality: encoding.quality(for: format), metadata: metadata, destination: destination)
        case .tiff:
            return try TIFFRowEncoder(
                width: width, height: height, channels: channels, metadata: metadata, destination: destination)
        case .heif, .gif, .bmp:
            throw ImagingError.notWritable(format)
        }
    }

    /// Copies the malloc'd output of a C encoder into an array and frees it.
    static func take(_ output: UnsafeMutablePointer<UInt8>?, size: Int) -> [UInt8]? {
        guard let output else { return nil }
        defer { sw_codec_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}

extension RowEncoder {
    /// Encodes a whole image in memory.
    func encode(_ image: ImageBuffer, token: CancellationToken) throws -> [UInt8] {
        try image.pixels.withUnsafeBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            try write(base, rows: image.height, token: token)
        }
        return try finish(token: token) ?? []
    }
}
