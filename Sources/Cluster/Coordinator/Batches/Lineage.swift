import Wire

/// Lineage, as Ray has it: a tilt-shift's input is the image its download left on the worker that ran it
/// (`TaskAssignment.keepOutput`); the coordinator never holds those bytes. When that copy is lost (the
/// worker died, left, or evicted it: the tilt-shift fails with `FailureCode.inputMissing`), the producer
/// is run again, on whichever worker is free, and the tilt-shift follows the new copy there. After
/// `maxReruns` losses the item fails with the last error.
struct Lineage: Sendable {
    /// The download whose output the dependent consumes.
    let producer: TaskAssignment
    let runner: any RemoteTaskRunning

    /// Times the producer is run again for one dependent before its item fails.
    static let maxReruns = 3
    /// Added to both tasks' attempt numbers per re-run, above what the dispatcher's own requeues reach,
    /// so that a late result of an earlier run is always stale.
    static let attemptStride: UInt32 = 100

    /// The input to inject from the producer's `output`: by reference when it stayed on its worker.
    static func input(from producer: TaskAssignment, output: TaskOutput) -> InjectedInput {
        InjectedInput(fromTaskID: producer.taskID, data: output.data, mediaType: output.mediaType,
                      onWorker: output.heldOnWorker)
    }

    /// Runs `dependent` where its input is; each time that input turns out lost, runs the producer again
    /// first (its result pins the dependent to the producer's new worker).
    func run(_ dependent: TaskAssignment, priority: Int, wasWaiting: Bool, avoiding: PeerIdentity? = nil) async throws -> TaskOutput {
        var dependent = dependent
        var reruns = 0
        var wasWaiting = wasWaiting
        while true {
            do {
                return try await runner.run(dependent, priority: priority, wasWaiting: wasWaiting, dependentKey: 0,
                                            avoiding: reruns == 0 ? avoiding : nil)
            } catch let error as RemoteTaskError where error.failure.code == .inputMissing && reruns < Self.maxReruns {
                reruns += 1
                wasWaiting = false
                var download = producer
                download.attempt = producer.attempt + UInt32(reruns) * Self.attemptStride
                // It keeps the slot for the dependent and pins it to its worker, as the first run did.
                let output = try await runner.run(download, priority: priority, wasWaiting: false, dependentKey: dependent.taskKey,
                                                  avoiding: nil)
                dependent.attempt = dependent.attempt + Self.attemptStride
                dependent.inputs = [Self.input(from: producer, output: output)]
            }
        }
    }
}
