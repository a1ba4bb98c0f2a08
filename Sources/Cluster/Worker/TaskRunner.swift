import Imaging
import Wire

/// Runs one task assignment on this worker: a download, or a tilt-shift of injected bytes.
///
/// Every failure becomes a `TaskFailure` with a code and a message that says what went wrong, so a
/// broken image fails its own item and nothing else.
struct TaskRunner: Sendable {
    let fetcher: ImageFetcher
    /// Threads the filter may use for one image.
    let filterThreads: Int

    func run(_ assignment: TaskAssignment) async -> TaskResult {
        let outcome: TaskOutcome
        do {
            switch assignment.kind {
            case .download:
                let fetched = try await fetcher.fetch(assignment.source)
                outcome = .output(TaskOutput(data: fetched.data, mediaType: fetched.format.mediaType))
            case .tiltShift:
                outcome = .output(try tiltShift(assignment))
            case .unspecified:
                outcome = .failure(TaskFailure(
                    code: .internal, message: "task \(assignment.taskID) has no kind this worker knows: upgrade the worker"))
            }
        } catch let error as ImagingError {
            outcome = .failure(TaskFailure(code: FailureCode(error.kind), message: error.message))
        } catch is CancellationError {
            outcome = .failure(TaskFailure(code: .cancelled, message: "cancelled"))
        } catch {
            outcome = .failure(TaskFailure(code: .internal, message: "\(error)"))
        }
        if Task.isCancelled, case .output = outcome {
            // Cancelled after the work was done: report the cancel, the coordinator no longer wants it.
            return TaskResult(taskID: assignment.taskID, attempt: assignment.attempt,
                              outcome: .failure(TaskFailure(code: .cancelled, message: "cancelled")))
        }
        return TaskResult(taskID: assignment.taskID, attempt: assignment.attempt, outcome: outcome)
    }

    private func tiltShift(_ assignment: TaskAssignment) throws -> TaskOutput {
        guard let input = assignment.inputs.first else {
            throw ImagingError(.processing, "tilt-shift task \(assignment.taskID) arrived without its input image")
        }
        let parameters = assignment.parameters ?? WireTiltShiftParameters(
            TiltShiftParameters.coreImage, encoding: EncodingOptions())
        let processed = try TiltShiftPipeline.process(
            input.data, parameters: parameters.filterParameters, encoding: parameters.encodingOptions,
            threads: filterThreads)
        return TaskOutput(
            data: processed.data, mediaType: processed.format.mediaType,
            width: UInt32(processed.width), height: UInt32(processed.height))
    }
}

extension FailureCode {
    init(_ kind: ImagingError.Kind) {
        switch kind {
        case .download: self = .download
        case .decode: self = .decode
        case .processing: self = .processing
        case .limit: self = .limit
        case .cancelled: self = .cancelled
        }
    }
}
