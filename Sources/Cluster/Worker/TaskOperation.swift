import Fetching
import Imaging
import Operations
import Wire

/// The operation an assigned task runs, by kind, so that its output is read with its own type (no
/// downcast of an `AsyncOperation`).
enum TaskOperation: Sendable {
    case download(FetchOperation)
    case tiltShift(TiltShiftOperation)
    /// A tilt-shift whose output went to the batch's sink: only its metadata comes back.
    case sinkTiltShift(SinkTiltShiftOperation)
    case noop(NoOpOperation)

    /// The operation, for the queue, cancellation and identity.
    var operation: AsyncOperation {
        switch self {
        case .download(let operation): operation
        case .tiltShift(let operation): operation
        case .sinkTiltShift(let operation): operation
        case .noop(let operation): operation
        }
    }

    /// The output of a finished operation, as the coordinator expects it; `nil` when it finished without one.
    var output: TaskOutput? {
        switch self {
        case .download(let download):
            switch download.output {
            case .image(let image)?:
                return TaskOutput(data: image.data, mediaType: image.format.mediaType)
            case .manifest(let manifest)?:
                return TaskOutput(data: ManifestList.encode(manifest.entries), mediaType: ManifestList.mediaType)
            case nil:
                return nil
            }
        case .tiltShift(let tiltShift):
            guard let image = tiltShift.output else { return nil }
            return TaskOutput(
                data: image.data, mediaType: image.format.mediaType,
                width: UInt32(image.width), height: UInt32(image.height), warnings: image.warnings)
        case .sinkTiltShift(let sinked):
            return sinked.output
        case .noop:
            return TaskOutput(data: [])
        }
    }

    /// For a failed download: whether the coordinator may retry it, and after how long.
    var retryAdvice: RetryAdvice? {
        guard case .download(let download) = self else { return nil }
        return download.retryAdvice
    }
}
