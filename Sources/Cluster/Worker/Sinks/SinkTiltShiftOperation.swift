import Imaging
import Operations
import Runtime
import Wire

/// A tilt-shift whose output goes to a sink from the worker itself: the pipeline runs on the worker's
/// `ComputeThreads` as `TiltShiftOperation`'s does, then the sink stores the bytes, and the result sent
/// back is their metadata (`TaskOutput.location`, size, CRC-32C, dimensions).
final class SinkTiltShiftOperation: TransformOperation<EncodedImage, TaskOutput>, @unchecked Sendable {
    private let parameters: TiltShiftParameters
    private let encoding: EncodingOptions
    private let threads: Int
    private let limits: ImageLimits
    private let computeThreads: ComputeThreads
    private let sink: any OutputSink
    /// The output's name in the sink, without extension (the format's is added).
    private let outputName: String
    /// The pipeline starts only if this gate was not given up first (`StartGate`; `nil`: always).
    var startGate: StartGate?

    init(
        name: String, parameters: TiltShiftParameters, encoding: EncodingOptions, threads: Int, limits: ImageLimits,
        computeThreads: ComputeThreads, sink: any OutputSink, outputName: String
    ) {
        self.parameters = parameters
        self.encoding = encoding
        self.threads = threads
        self.limits = limits
        self.computeThreads = computeThreads
        self.sink = sink
        self.outputName = outputName
        super.init(name: name)
    }

    override func transform(_ input: EncodedImage) async throws -> TaskOutput {
        let (data, parameters, encoding, limits, threads, gate) = (
            input.data, parameters, encoding, limits, threads, startGate
        )
        let pipeline = { @Sendable (cancellation: CancellationFlag) throws -> ProcessedImage in
            guard gate?.start() ?? true else { throw CancellationError() }
            return try TiltShiftPipeline.process(
                data, parameters: parameters, encoding: encoding, limits: limits, threads: threads,
                cancellation: cancellation)
        }
        let outputName = outputName
        let image: ProcessedImage
        let stored: StoredOutput
        if let directory = sink as? DirectorySink {
            // The compute thread hands the output straight to a sink thread: this task wakes once, at the end.
            (image, stored) = try await computeThreads.run(pipeline, then: directory.threads) { image, _ in
                (image, try directory.write(image.data, name: "\(outputName).\(image.format.fileExtension)"))
            }
        } else {
            image = try await computeThreads.run(pipeline)
            try Task.checkCancellation()
            stored = try await sink.store(
                image.data, name: "\(outputName).\(image.format.fileExtension)", mediaType: image.format.mediaType)
        }
        var output = TaskOutput(
            location: stored.location, size: stored.size, crc32c: stored.crc32c,
            mediaType: image.format.mediaType, width: UInt32(image.width), height: UInt32(image.height))
        output.warnings = image.warnings
        return output
    }
}
