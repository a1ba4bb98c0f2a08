import Wire
import XCTest

@testable import Cluster

/// `RemoteRun`, the steps of a remote operation's attempts: a result in, the next request (or the end)
/// out. Retries themselves are decided by `TaskRetrySchedule` (`TaskRetryScheduleTests`).
final class RemoteRunTests: XCTestCase {
    private let producer = TaskAssignment(
        taskID: "b-1/0/download", batchID: "b-1", attempt: 1, kind: .download,
        source: "http://origin/a.jpg", taskKey: 10)
    private let held = TaskOutput(heldOnWorker: true, size: 6, mediaType: "image/jpeg")
    private let workerA = PeerIdentity([1])

    private func dependent() -> TaskAssignment {
        TaskAssignment(
            taskID: "b-1/0/tilt-shift", batchID: "b-1", attempt: 1, kind: .tiltShift, source: "http://origin/a.jpg",
            inputs: [Lineage.input(from: producer, output: held)], taskKey: 11)
    }

    private func failure(
        _ code: FailureCode, attempt: UInt32, worker: PeerIdentity? = nil
    ) -> Result<TaskOutput, any Error> {
        .failure(
            RemoteTaskError(failure: TaskFailure(code: code, message: "\(code)"), attempt: attempt, worker: worker))
    }

    func testASuccessEndsTheRun() throws {
        var run = RemoteRun(assignment: producer, lineage: nil, attempt: 1, workerLosses: 0)
        XCTAssertEqual(run.request.assignment.taskKey, 10)
        XCTAssertTrue(run.request.keepsSlotForDependent, "a download keeps its worker's slot for its tilt-shift")
        guard case .succeed(let output) = run.step(after: .success(held)) else { return XCTFail("expected success") }
        XCTAssertEqual(output.size, 6)
    }

    /// A lost input: the producer runs again (new attempt number, keeping the slot for the dependent), then
    /// the dependent follows the new copy with a new attempt number; after `maxReruns` losses, the failure
    /// goes to the retry schedule.
    func testLostInputRerunsTheProducerThenTheDependent() throws {
        var run = RemoteRun(assignment: dependent(), lineage: Lineage(producer: producer), attempt: 1, workerLosses: 0)
        XCTAssertFalse(run.request.keepsSlotForDependent)
        XCTAssertEqual(run.request.dependentKey, 0)
        for rerun in 1...Lineage.maxReruns {
            guard case .send(let again) = run.step(after: failure(.inputMissing, attempt: 1)) else {
                return XCTFail("rerun \(rerun): expected the producer again")
            }
            XCTAssertEqual(again.assignment.taskKey, 10)
            XCTAssertEqual(again.assignment.attempt, 1 + UInt32(rerun) * Lineage.attemptStride)
            XCTAssertEqual(again.dependentKey, 11, "the re-run keeps its slot for the dependent")
            guard case .send(let follow) = run.step(after: .success(held)) else {
                return XCTFail("expected the dependent")
            }
            XCTAssertEqual(follow.assignment.taskKey, 11)
            XCTAssertEqual(follow.assignment.attempt, 1 + UInt32(rerun) * Lineage.attemptStride)
            XCTAssertEqual(follow.assignment.inputs.first?.fromTaskID, producer.taskID)
        }
        guard case .failed(let error) = run.step(after: failure(.inputMissing, attempt: 301)) else {
            return XCTFail("after \(Lineage.maxReruns) re-runs the loss is a failure")
        }
        XCTAssertEqual(error.failure.code, .inputMissing)
    }

    /// A retry is a new attempt, above the failed one's number, away from the worker where it failed; the
    /// lineage count starts over.
    func testRetryIsANewAttemptAvoidingTheWorker() throws {
        var run = RemoteRun(assignment: dependent(), lineage: Lineage(producer: producer), attempt: 1, workerLosses: 0)
        guard case .send = run.step(after: failure(.inputMissing, attempt: 1)) else {
            return XCTFail("expected a re-run")
        }
        guard case .failed(let error) = run.step(after: failure(.download, attempt: 101, worker: workerA)) else {
            return XCTFail("a failed re-run is a failure of the attempt")
        }
        let retry = run.retry(after: error)
        XCTAssertEqual(run.attempt, 2)
        XCTAssertEqual(retry.assignment.attempt, 102)
        XCTAssertEqual(retry.avoiding, workerA)
        XCTAssertEqual(retry.assignment.taskKey, 11)
        guard case .send(let again) = run.step(after: failure(.inputMissing, attempt: 102)) else {
            return XCTFail("re-runs are counted per attempt")
        }
        XCTAssertEqual(again.assignment.attempt, 1 + Lineage.attemptStride)
    }

    func testWithdrawnStops() {
        var run = RemoteRun(assignment: producer, lineage: nil, attempt: 1, workerLosses: 0)
        guard case .stop(let error) = run.step(after: .failure(CancellationError())) else {
            return XCTFail("expected stop")
        }
        XCTAssertTrue(error is CancellationError)
    }
}
