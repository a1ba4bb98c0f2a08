/// The result of `TiltShiftPipeline.process`: encoded bytes and what they hold.
public struct ProcessedImage: Sendable {
    public let data: [UInt8]
    public let format: ImageFormat
    public let width: Int
    public let height: Int

    public init(data: [UInt8], format: ImageFormat, width: Int, height: Int) {
        self.data = data
        self.format = format
        self.width = width
        self.height = height
    }
}

/// Decode → tilt-shift → encode, in one call.
public enum TiltShiftPipeline {
    /// Processes encoded JPEG or PNG bytes (recognised by their magic bytes).
    ///
    /// - Parameters:
    ///   - limits: byte and pixel limits checked before decoding (decompression bombs).
    ///   - threads: worker threads for the filter (1: the calling thread only).
    /// - Throws: `ImagingError`: `.decode` for unreadable input, `.limit`, `.processing` for bad
    ///   parameters, `.cancelled` when the current Task is cancelled (checked between blocks of rows).
    public static func process(_ data: [UInt8], parameters: TiltShiftParameters, encoding: EncodingOptions,
                               limits: ImageLimits = .default, threads: Int = 1) throws -> ProcessedImage {
        let parameters = try parameters.validated()
        let encoding = try encoding.validated()
        try checkCancellation()
        var (filtered, inputFormat) = try ImageCodec.decode(data, limits: limits)
        try checkCancellation()
        try TiltShiftFilter.applyInPlace(&filtered, parameters: parameters, threads: threads)
        try checkCancellation()
        let format = encoding.format ?? inputFormat
        let bytes = try ImageCodec.encode(filtered, as: format, jpegQuality: encoding.jpegQuality,
                                          pngCompressionLevel: encoding.pngCompressionLevel)
        return ProcessedImage(data: bytes, format: format, width: filtered.width, height: filtered.height)
    }

    static func checkCancellation() throws {
        if Task.isCancelled { throw ImagingError.cancelledError }
    }
}
