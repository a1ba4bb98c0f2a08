import Operations
import Runtime

/// Decodes an encoded image, applies the tilt-shift and encodes the result, as an operation of the
/// engine. Its input is usually injected from a fetch (module Fetching); set `input` by hand otherwise.
///
/// The pipeline runs on `computeThreads`, threads of its own, never on Swift's cooperative pool: an image
/// of 100+ megapixels takes seconds, and the pool's threads must stay free for the actors, heartbeats and
/// sockets of the process. Decoding, the filter and encoding check for cancellation every few rows, so
/// cancelling the operation stops the work promptly.
public final class TiltShiftOperation: TransformOperation<EncodedImage, ProcessedImage>, @unchecked Sendable {
    /// The filter settings.
    public let parameters: TiltShiftParameters
    /// The output format and quality.
    public let encoding: EncodingOptions
    /// Threads the filter may use.
    public let threads: Int
    /// Byte and pixel limits checked before decoding.
    public let limits: ImageLimits
    /// The threads the pipeline runs on.
    public let computeThreads: ComputeThreads
    /// When set, the pipeline starts only if the gate was not given up first (`StartGate`): a worker can
    /// then give the task back while it still waits for a compute thread. Set before the operation starts.
    public var startGate: StartGate?

    /// Creates a tilt-shift of an image that will be injected or set as `input`.
    public init(
        name: String = "tilt-shift", parameters: TiltShiftParameters, encoding: EncodingOptions = EncodingOptions(),
        threads: Int = 1, limits: ImageLimits = .default, computeThreads: ComputeThreads = .shared,
        priority: OperationPriority = .normal
    ) {
        self.parameters = parameters
        self.encoding = encoding
        self.threads = threads
        self.limits = limits
        self.computeThreads = computeThreads
        super.init(name: name, priority: priority)
    }

    /// Runs the decode → filter → encode pipeline on the input, on one of `computeThreads`.
    public override func transform(_ input: EncodedImage) async throws -> ProcessedImage {
        let (data, parameters, encoding, limits, threads, gate) = (
            input.data, parameters, encoding, limits, threads, startGate
        )
        return try await computeThreads.run { cancellation in
            guard gate?.start() ?? true else { throw CancellationError() }
            return try TiltShiftPipeline.process(
                data, parameters: parameters, encoding: encoding, limits: limits, threads: threads,
                cancellation: cancellation)
        }
    }
}
