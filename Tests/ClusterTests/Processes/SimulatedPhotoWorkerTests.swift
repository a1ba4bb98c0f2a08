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

    /// A download carrying its tilt-shift (`followOn`), as the coordinator sends it to a worker that
    /// announces chained tasks: the simulated worker announces as the real one does for each
    /// `SHIFTWORK_CHAINED_TASKS`, and sends the same results grouped in the same messages.
    func testAChainedDownloadIsAnsweredAsARealWorkerAnswersIt() async throws {
        try await compareChainedAnswers(.on)
    }

    /// `SHIFTWORK_CHAINED_TASKS=together`: both results in one message, on the real worker and the simulated one.
    func testAChainedDownloadReportedTogetherIsAnsweredAsARealWorkerAnswersIt() async throws {
        try await compareChainedAnswers(.together)
    }

    /// A worker that does not announce chained tasks still runs a follow-on it is sent (nothing is lost).
    func testAFollowOnSentToAWorkerThatDidNotAnnounceItIsAnsweredAsARealWorkerAnswersIt() async throws {
        try await compareChainedAnswers(.off)
    }

    private func compareChainedAnswers(_ chaining: PhotoChaining) async throws {
        let context = try MessagingContext()
        let coordinator = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
        _ = try harness.launch("real", ["worker", "--slots", "2", "--worker-id", "real", "--coordinator", endpoint],
                           environment: ["SHIFTWORK_CHAINED_TASKS": chaining.rawValue])
        let hello = await coordinator.next { if case .workerHello(let hello) = $0 { hello } else { nil } }
        let announced = try XCTUnwrap(hello, "the worker never said hello:\n\(harness.allOutput)").acceptsChainedTasks
        XCTAssertEqual(SimulatedPhotoWorker(chaining: chaining).chaining.announced, announced, "\(chaining)")
        let worker = try XCTUnwrap(coordinator.lastIdentity)
        coordinator.send(.welcome(Welcome(heartbeatIntervalMs: 1000, coordinatorID: "played", acceptsBatches: true)), to: worker)

        let (url, photoBytes) = try serveImage("photo-0.jpg", format: .jpeg, width: 400, height: 300)
        let sink = harness.scratch.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        let download = Self.chainedDownload(source: url, sink: sink.path)
        let followOn = try XCTUnwrap(download.followOn)
        coordinator.send(.taskAssignment(download), to: worker)
        for key in [download.taskKey, followOn.taskKey] {
            let result = await coordinator.next(timeout: .seconds(60)) {
                if case .taskResult(let result) = $0, result.taskKey == key { result } else { nil }
            }
            XCTAssertNotNil(result, "no result for task key \(key) (\(chaining)):\n\(harness.allOutput)")
        }
        // The results as the real worker grouped them in messages.
        let real: [[TaskResult]] = coordinator.receivedWhole.compactMap {
            switch $0 {
            case .taskResult(let result): [result]
            case .taskResults(let results): results
            default: nil
            }
        }

        let written = [UInt8](try Data(contentsOf: sink.appendingPathComponent("photo-0.jpg")))
        let decoded = try ImageCodec.decode(written).image
        let photo = SimulatedPhoto(
            downloadBytes: UInt64(photoBytes.count), mediaType: "image/jpeg", outputBytes: UInt64(written.count),
            outputCRC32C: CRC32C.checksum(written), width: UInt32(decoded.width), height: UInt32(decoded.height))
        var simulated = SimulatedPhotoWorker(chaining: chaining, describe: { _ in photo })
        XCTAssertEqual(simulated.messages(answering: download), real, "the simulation answers unlike a real worker (\(chaining))")
        XCTAssertEqual(simulated.heldCount, 0, "the chained tilt-shift took the held download")
        // What the assertion above covers: a held download, then the sink output, grouped as the setting says.
        XCTAssertEqual(real.map(\.count), chaining == .together ? [2] : [1, 1], "\(real)")
        let results = Array(real.joined())
        guard results.count == 2, case .output(let held) = results[0].outcome, case .output(let stored) = results[1].outcome else {
            return XCTFail("unexpected real results: \(real)")
        }
        XCTAssertTrue(held.heldOnWorker && held.data.isEmpty, "\(held)")
        XCTAssertEqual(stored.location, sink.appendingPathComponent("photo-0.jpg").path)

        await coordinator.close()
        await context.terminate()
    }

    /// A photo's download with its tilt-shift chained to it (`followOn`), as the coordinator sends it to a
    /// worker that announced chained tasks.
    static func chainedDownload(source: String, sink: String) -> TaskAssignment {
        let assignments = photoAssignments(source: source, sink: sink)
        var download = assignments[0]
        download.followOn = ChainedTask(assignments[1])
        return download
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
