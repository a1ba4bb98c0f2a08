import Operations

/// Decodes an encoded image, applies the tilt-shift and encodes the result, as an operation of the
/// engine. Its input is usually injected from a fetch (module Fetching); set `input` by hand otherwise.
///
/// The filter checks for cancellation between blocks of rows, so cancelling the operation stops the
/// work promptly.
public final class TiltShiftOperation: TransformOperation<EncodedImage, ProcessedImage>, @unchecked Sendable {
    /// The filter settings.
    public let parameters: TiltShiftParameters
    /// The output format and quality.
    public let encoding: EncodingOptions
    /// Threads the filter may use.
    public let threads: Int
    /// Byte and pixel limits checked before decoding.
    public let limits: ImageLimits

    /// Creates a tilt-shift of an image that will be injected or set as `input`.
    public init(
        name: String = "tilt-shift", parameters: TiltShiftParameters, encoding: EncodingOptions = EncodingOptions(),
        threads: Int = 1, limits: ImageLimits = .default, priority: OperationPriority = .normal
    ) {
        self.parameters = parameters
        self.encoding = encoding
        self.threads = threads
        self.limits = limits
        super.init(name: name, priority: priority)
    }

    /// Runs the decode → filter → encode pipeline on the input.
    public override func transform(_ input: EncodedImage) async throws -> ProcessedImage {
        try TiltShiftPipeline.process(
            input.data, parameters: parameters, encoding: encoding, limits: limits, threads: threads)
    }
}
