@testable import Cluster
import ClusterSimulation
import Foundation
import Imaging
import Messaging
import Wire
import XCTest

/// The 1,000-worker photo simulation (`ClusterBenchmark --photos`) is only as good as its workers'
/// answers: a real `shiftwork worker` is given a photo's download and tilt-shift by a coordinator played on a
/// real ROUTER socket, with a directory sink, and `SimulatedPhotoWorker` must answer the same assignments
/// with exactly the same `TaskResult`s (every field) when given the real photo's figures.
final class SimulatedPhotoWorkerTests: ClusterTestCase {
    func testTheSimulatedAnswersAreExactlyARealWorkersForEachPhotoTask() async throws {
        let context = try MessagingContext()
        let coordinator = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
        try harness.startWorker("real", endpoint: endpoint)
        let hello = await coordinator.next { if case .workerHello(let hello) = $0 { hello } else { nil } }
        XCTAssertNotNil(hello, "the worker never said hello:\n\(harness.allOutput)")
        let worker = try XCTUnwrap(coordinator.lastIdentity)
        coordinator.send(.welcome(Welcome(heartbeatIntervalMs: 1000, coordinatorID: "played", acceptsBatches: true)), to: worker)

        let (url, photoBytes) = try serveImage("photo-0.jpg", format: .jpeg, width: 400, height: 300)
        let sink = harness.scratch.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let assignments = Self.photoAssignments(source: url, sink: sink.path)
        var real: [TaskResult] = []
        for assignment in assignments {
            coordinator.send(.taskAssignment(assignment), to: worker)
            let result = await coordinator.next(timeout: .seconds(60)) {
                if case .taskResult(let result) = $0, result.taskKey == assignment.taskKey { result } else { nil }
            }
            real.append(try XCTUnwrap(result, "no result for \(assignment.taskID):\n\(harness.allOutput)"))
        }

        // The real photo's figures: the file served, and the output the worker wrote into the sink.
        let written = [UInt8](try Data(contentsOf: sink.appendingPathComponent("photo-0.jpg")))
        let decoded = try ImageCodec.decode(written).image
        let photo = SimulatedPhoto(
            downloadBytes: UInt64(photoBytes.count), mediaType: "image/jpeg", outputBytes: UInt64(written.count),
            outputCRC32C: CRC32C.checksum(written), width: UInt32(decoded.width), height: UInt32(decoded.height))
        var simulated = SimulatedPhotoWorker(describe: { _ in photo })
        let answers = assignments.map { simulated.answer($0) }
        for (answer, result) in zip(answers, real) {
            XCTAssertEqual(answer, result, "the simulation answers \(answer.taskID) unlike a real worker")
        }
        // What the assertions above cover: a held download, a sink output, a missing input.
        guard case .output(let held) = real[0].outcome, case .output(let stored) = real[1].outcome,
              case .failure(let missing) = real[2].outcome else {
            return XCTFail("unexpected real results: \(real)")
        }
        XCTAssertTrue(held.heldOnWorker && held.data.isEmpty, "\(held)")
        XCTAssertEqual(stored.location, sink.appendingPathComponent("photo-0.jpg").path)
        XCTAssertEqual(missing.code, .inputMissing)

        await coordinator.close()
        await context.terminate()
    }

    /// A photo's download and tilt-shift as the coordinator assigns them with a directory sink, and a
    /// tilt-shift whose download the worker never ran.
    static func photoAssignments(source: String, sink: String) -> [TaskAssignment] {
        var download = TaskAssignment(taskID: "b-1/0/download", batchID: "b-1", attempt: 1, kind: .download, source: source,
                                      taskKey: 1, sequence: 1)
        download.keepOutput = true
        func tiltShift(from producer: String, key: UInt64) -> TaskAssignment {
            var assignment = TaskAssignment(
                taskID: "b-1/\(key)/tilt-shift", batchID: "b-1", attempt: 1, kind: .tiltShift, source: source,
                inputs: [InjectedInput(fromTaskID: producer, data: [], mediaType: "image/jpeg", onWorker: true)],
                parameters: WireTiltShiftParameters(TiltShiftParameters.coreImage, encoding: EncodingOptions()),
                taskKey: key, sequence: key)
            assignment.sink = sink
            assignment.sinkName = "photo-\(key - 2)"
            return assignment
        }
        return [download, tiltShift(from: download.taskID, key: 2), tiltShift(from: "b-1/9/download", key: 3)]
    }
}
