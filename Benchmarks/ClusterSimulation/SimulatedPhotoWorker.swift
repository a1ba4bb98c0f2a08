import Foundation
import Imaging
import Wire

/// The answers of one simulated worker to photo tasks: exactly the `TaskResult` a real `shiftwork worker`
/// sends for each task kind (`Sources/Cluster/Worker`: `Worker`, `AssignedTask`, `InputCache`,
/// `SinkTiltShiftOperation`), built from a `SimulatedPhoto`'s figures instead of real work.
///
/// A pure state machine (assignment in, result out) that remembers which downloads it "holds", as a real
/// worker's input cache does: a download with `keepOutput` is answered as held on the worker (metadata only,
/// the bytes stay); its tilt-shift, sent here with the input as a reference (`InjectedInput.onWorker`), is
/// answered with the sink output's metadata (`location`, size, CRC-32C, dimensions), or without a sink with
/// an output of `outputBytes` bytes; a tilt-shift whose input this worker does not hold fails with
/// `inputMissing`, as a real worker's does. A download carrying a chained tilt-shift
/// (`TaskAssignment.followOn`) is answered as `Worker.finished` does: the download's result, then the
/// tilt-shift's, run on the held image at once; with `PhotoChaining.together` both in one message; after a
/// failed download the tilt-shift is neither run nor answered. `ClusterTests`' `SimulatedPhotoWorkerTests`
/// hold it to a real worker's messages.
public struct SimulatedPhotoWorker: Sendable {
    /// The figures of the photo at a source URL.
    private let describe: @Sendable (String) -> SimulatedPhoto
    /// Download task ID → the photo held for its tilt-shift.
    private var held: [String: SimulatedPhoto] = [:]
    /// The bytes sent as every output when a batch has no sink (shared, never copied before encoding).
    private let unsunkOutput: [UInt8]
    /// Whether it announces chained tasks and how it reports them.
    public let chaining: PhotoChaining

    /// A worker whose photos are described by `describe` (by default 12-megapixel JPEGs); without a sink, its
    /// outputs carry `unsunkOutputBytes` bytes each.
    /// `chaining` is a real worker's default unless told otherwise.
    public init(
        unsunkOutputBytes: Int = 1_000_000, chaining: PhotoChaining = .on,
        describe: @escaping @Sendable (String) -> SimulatedPhoto = SimulatedPhoto.twelveMegapixel
    ) {
        self.describe = describe
        self.chaining = chaining
        // JPEG's start-of-image marker first, so that nothing mistakes it for another format.
        var bytes = [UInt8](repeating: 0, count: max(4, unsunkOutputBytes))
        bytes[0] = 0xFF
        bytes[1] = 0xD8
        unsunkOutput = bytes
    }

    /// How many downloads it holds for their tilt-shift.
    public var heldCount: Int { held.count }

    /// Forgets every held download: a real worker empties its input cache on every `Welcome`.
    public mutating func forgetAll() {
        held.removeAll()
    }

    /// The result a real worker sends once `assignment` has run.
    public mutating func answer(_ assignment: TaskAssignment) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: outcome(of: assignment),
            taskKey: assignment.taskKey)
    }

    /// The messages a real worker sends once `assignment` has run, and the tilt-shift chained to it if any:
    /// each message its results, one result a `TaskResult` message, two a `TaskResultBatch`. A chained
    /// tilt-shift runs only after a download held on the worker; its result goes with the download's in one
    /// message when `chaining` is `together` and the coordinator takes batches (`Welcome.acceptsBatches`).
    public mutating func messages(
        answering assignment: TaskAssignment, coordinatorAcceptsBatches: Bool = true
    ) -> [[TaskResult]] {
        Array(
            runs(answering: assignment, coordinatorAcceptsBatches: coordinatorAcceptsBatches).map(\.messagesAtEnd)
                .joined())
    }

    /// The task runs `assignment` makes on a real worker, in order, each with the messages sent when it ends
    /// (together, the messages of ``messages(answering:coordinatorAcceptsBatches:)``): one run, or for a
    /// download with a chained tilt-shift, the download's, then the tilt-shift's, which starts in the same slot
    /// when the download ends (`Worker.finished`). With `together` (and a coordinator that takes batches) the
    /// download's result is held back: its run ends with no message, and both results go at the tilt-shift's
    /// end. A simulation with a task delay gives each run the delay (`SimulatedWorkerGroup`).
    public mutating func runs(
        answering assignment: TaskAssignment, coordinatorAcceptsBatches: Bool = true
    ) -> [SimulatedRun] {
        let result = answer(assignment)
        // As a real worker, whatever it announced: a follow-on that arrives is run.
        guard let followOn = assignment.chainedAssignment, case .output(let output) = result.outcome,
            output.heldOnWorker
        else {
            return [SimulatedRun(taskKey: assignment.taskKey, messagesAtEnd: [[result]])]
        }
        let chained = answer(followOn)
        if chaining == .together && coordinatorAcceptsBatches {
            return [
                SimulatedRun(taskKey: assignment.taskKey, messagesAtEnd: []),
                SimulatedRun(taskKey: followOn.taskKey, messagesAtEnd: [[result, chained]]),
            ]
        }
        return [
            SimulatedRun(taskKey: assignment.taskKey, messagesAtEnd: [[result]]),
            SimulatedRun(taskKey: followOn.taskKey, messagesAtEnd: [[chained]]),
        ]
    }

    private mutating func outcome(of assignment: TaskAssignment) -> TaskOutcome {
        switch assignment.kind {
        case .noop:
            return .output(TaskOutput(data: []))
        case .download:
            guard assignment.keepOutput else {
                // A real worker would send the image's bytes (an older coordinator): not simulated.
                return .failure(
                    TaskFailure(
                        code: .internal,
                        message:
                            "\(assignment.source): the simulation answers only downloads kept on the worker (keepOutput)"
                    ))
            }
            let photo = describe(assignment.source)
            held[assignment.taskID] = photo
            return .output(TaskOutput(heldOnWorker: true, size: photo.downloadBytes, mediaType: photo.mediaType))
        case .tiltShift:
            return tiltShift(assignment)
        case .unspecified:
            return .failure(
                TaskFailure(
                    code: .internal,
                    message:
                        "task \(assignment.taskID) has a kind this worker does not know: upgrade the worker"))
        }
    }

    private mutating func tiltShift(_ assignment: TaskAssignment) -> TaskOutcome {
        guard let input = assignment.inputs.first else {
            return .failure(
                TaskFailure(
                    code: .dependency,
                    message:
                        "tilt-shift task \(assignment.taskID) arrived without its input image"))
        }
        let photo: SimulatedPhoto
        if input.onWorker {
            guard let kept = held.removeValue(forKey: input.fromTaskID) else {
                return .failure(
                    TaskFailure(
                        code: .inputMissing,
                        message:
                            "\(assignment.source): its downloaded image is no longer in this worker's cache; the coordinator downloads it again"
                    ))
            }
            photo = kept
        } else {
            photo = describe(assignment.source)
        }
        let format = Self.outputFormat(assignment.parameters?.outputFormat ?? .sameAsInput, input: photo.mediaType)
        guard !assignment.sink.isEmpty else {
            return .output(
                TaskOutput(data: unsunkOutput, mediaType: format.mediaType, width: photo.width, height: photo.height))
        }
        guard assignment.sink.hasPrefix("/") else {
            return .failure(
                TaskFailure(
                    code: .sink,
                    message:
                        "\(assignment.source): sink \(assignment.sink): the simulation writes only to directory sinks (an absolute path)"
                ))
        }
        // As `DirectorySink`: the directory's URL with the output's name and its format's extension.
        let location = URL(fileURLWithPath: assignment.sink, isDirectory: true)
            .appendingPathComponent("\(assignment.sinkName).\(format.fileExtension)").path
        return .output(
            TaskOutput(
                location: location, size: photo.outputBytes, crc32c: photo.outputCRC32C,
                mediaType: format.mediaType, width: photo.width, height: photo.height))
    }

    /// The format a tilt-shift writes: the one asked for, else the input's (JPEG when unknown or only read).
    private static func outputFormat(_ asked: WireImageFormat, input mediaType: String) -> ImageFormat {
        switch asked {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .tiff: .tiff
        case .sameAsInput: (ImageFormat(mediaType: mediaType) ?? .jpeg).defaultOutput
        }
    }
}
