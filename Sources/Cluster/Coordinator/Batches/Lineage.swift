import Wire

/// Lineage, as Ray has it: a tilt-shift's input is the image its download left on the worker that ran it
/// (`TaskAssignment.keepOutput`); the coordinator never holds those bytes. When that copy is lost (the
/// worker died, left, or evicted it: the tilt-shift fails with `FailureCode.inputMissing`), the producer
/// is run again, on whichever worker is free, and the tilt-shift follows the new copy there. After
/// `maxReruns` losses the item fails with the last error. (`RemoteRun` carries this out.)
struct Lineage: Sendable {
    /// The download whose output the dependent consumes.
    let producer: TaskAssignment

    /// Times the producer is run again for one dependent before its item fails.
    static let maxReruns = 3
    /// Added to both tasks' attempt numbers per re-run, above what the dispatcher's own requeues reach,
    /// so that a late result of an earlier run is always stale.
    static let attemptStride: UInt32 = 100

    /// The input to inject from the producer's `output`: by reference when it stayed on its worker.
    static func input(from producer: TaskAssignment, output: TaskOutput) -> InjectedInput {
        InjectedInput(
            fromTaskID: producer.taskID, data: output.data, mediaType: output.mediaType,
            onWorker: output.heldOnWorker)
    }

    /// The producer as it runs again for the `number`th time (1-based): a new attempt number. It keeps the
    /// slot for the dependent and pins it to its worker, as the first run did.
    func rerun(_ number: Int) -> TaskAssignment {
        var download = producer
        download.attempt = producer.attempt + UInt32(number) * Self.attemptStride
        return download
    }

    /// The output of a download whose image stayed on its worker, as far as a dependent chained to it knows
    /// before it ran (its media type comes with its result).
    static let heldImage = TaskOutput(heldOnWorker: true, size: 0, mediaType: "")

    /// `dependent` as it runs after a re-run of the producer that gave `output`: a new attempt, where the
    /// new copy is.
    func follow(_ dependent: TaskAssignment, output: TaskOutput) -> TaskAssignment {
        var next = dependent
        next.attempt = dependent.attempt + Self.attemptStride
        next.inputs = [Self.input(from: producer, output: output)]
        return next
    }
}
