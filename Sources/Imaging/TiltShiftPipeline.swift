import Operations

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
///
/// The call is CPU-bound for as long as the image is large (seconds at 100+ megapixels): from async code,
/// run it on threads of its own (``ComputeThreads``, as `TiltShiftOperation` does), never on Swift's
/// cooperative pool.
public enum TiltShiftPipeline {
    /// Processes encoded JPEG or PNG bytes (recognised by their magic bytes).
    ///
    /// - Parameters:
    ///   - limits: byte and pixel limits checked before decoding (decompression bombs).
    ///   - threads: worker threads for the filter (1: the calling thread only).
    ///   - cancellation: raised to stop the work early; checked every few rows while decoding, filtering and
    ///     encoding (so is the current task's cancellation, when called from a task).
    /// - Throws: `ImagingError`: `.decode` for unreadable input, `.limit`, `.processing` for bad
    ///   parameters, `.cancelled` when `cancellation` is raised or the current task is cancelled.
    public static func process(_ data: [UInt8], parameters: TiltShiftParameters, encoding: EncodingOptions,
                               limits: ImageLimits = .default, threads: Int = 1,
                               cancellation: CancellationFlag? = nil) throws -> ProcessedImage {
        let parameters = try parameters.validated()
        let encoding = try encoding.validated()
        return try CancellationToken.with(cancellation) { token in
            try token.check()
            var (filtered, inputFormat) = try ImageCodec.decode(data, limits: limits, token: token)
            try token.check()
            try TiltShiftFilter.applyInPlace(&filtered, parameters: parameters, threads: threads, token: token)
            try token.check()
            let format = encoding.format ?? inputFormat
            let bytes = try ImageCodec.encode(filtered, as: format, jpegQuality: encoding.jpegQuality,
                                              pngCompressionLevel: encoding.pngCompressionLevel, token: token)
            return ProcessedImage(data: bytes, format: format, width: filtered.width, height: filtered.height)
        }
    }
}
