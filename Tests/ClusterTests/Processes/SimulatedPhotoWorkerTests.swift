import ClusterSimulation
import Foundation
import Imaging
import Messaging
import Wire
import XCTest

@testable import Cluster

/// The 1,000-worker photo simulation (`ClusterBenchmark --photos`) is only as good as its workers'
/// answers: a real `shiftwork worker` is given a photo's download and tilt-shift by a coordinator played on a
/// real ROUTER socket, with a directory sink, and `SimulatedPhotoWorker` must answer the same assignments
/// with exactly the same `TaskResult`s (every field) when given the real photo's figures; and the no-op
/// simulation's fast path must send the same bytes as a real worker for no-op tasks.
final class SimulatedPhotoWorkerTests: ClusterTestCase {
    /// A real worker welcomed by a coordinator played on a ROUTER socket, and a served photo with a sink.
    private struct PlayedSession {
        let context: MessagingContext
        let coordinator: WirePeer
        let worker: [UInt8]
        let hello: WorkerHello
        let url: String
        let photoBytes: [UInt8]
        let sink: URL

        /// The simulated figures of the real photo: the file served, and the output the worker wrote into the sink.
        func realPhoto() throws -> SimulatedPhoto {
            let written = [UInt8](try Data(contentsOf: sink.appendingPathComponent("photo-0.jpg")))
            let decoded = try ImageCodec.decode(written).image
            return SimulatedPhoto(
                downloadBytes: UInt64(photoBytes.count), mediaType: "image/jpeg", outputBytes: UInt64(written.count),
                outputCRC32C: CRC32C.checksum(written), width: UInt32(decoded.width), height: UInt32(decoded.height))
        }

        func close() async {
            await coordinator.close()
            await context.terminate()
        }
    }

    private func startSession(environment: [String: String] = [:]) async throws -> PlayedSession {
        let context = try MessagingContext()
        let coordinator = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
        _ = try harness.launch(
            "real", ["worker", "--slots", "2", "--worker-id", "real", "--coordinator", endpoint],
            environment: environment)
        let hello = await coordinator.next { if case .workerHello(let hello) = $0 { hello } else { nil } }
        let said = try XCTUnwrap(hello, "the worker never said hello:\n\(harness.allOutput)")
        let worker = try XCTUnwrap(coordinator.lastIdentity)
        coordinator.send(
            .welcome(Welcome(heartbeatIntervalMs: 1000, coordinatorID: "played", acceptsBatches: true)), to: worker)
        let (url, photoBytes) = try serveImage("photo-0.jpg", format: .jpeg, width: 400, height: 300)
        let sink = harness.scratch.appendingPathComponent("sink")
        try FileManager.default.createDirectory(at: sink, withIntermediateDirectories: true)
        return PlayedSession(
            context: context, coordinator: coordinator, worker: worker, hello: said, url: url,
            photoBytes: photoBytes, sink: sink)
    }

    func testTheSimulatedAnswersAreExactlyARealWorkersForEachPhotoTask() async throws {
        let session = try await startSession()
        let (coordinator, worker, url, sink) = (session.coordinator, session.worker, session.url, session.sink)
        let assignments = Self.photoAssignments(source: url, sink: sink.path)
        var real: [TaskResult] = []
        for assignment in assignments {
            coordinator.send(.taskAssignment(assignment), to: worker)
            let result = await coordinator.next(timeout: .seconds(60)) {
                if case .taskResult(let result) = $0, result.taskKey == assignment.taskKey { result } else { nil }
            }
            real.append(try XCTUnwrap(result, "no result for \(assignment.taskID):\n\(harness.allOutput)"))
        }

        let photo = try session.realPhoto()
        var simulated = SimulatedPhotoWorker(describe: { _ in photo })
        let answers = assignments.map { simulated.answer($0) }
        for (answer, result) in zip(answers, real) {
            XCTAssertEqual(answer, result, "the simulation answers \(answer.taskID) unlike a real worker")
        }
        // What the assertions above cover: a held download, a sink output, a missing input.
        guard case .output(let held) = real[0].outcome, case .output(let stored) = real[1].outcome,
            case .failure(let missing) = real[2].outcome
        else {
            return XCTFail("unexpected real results: \(real)")
        }
        XCTAssertTrue(held.heldOnWorker && held.data.isEmpty, "\(held)")
        XCTAssertEqual(stored.location, sink.appendingPathComponent("photo-0.jpg").path)
        XCTAssertEqual(missing.code, .inputMissing)
        await session.close()
    }

    /// The no-op fast path (`NoopAssignmentScan` reading the assignments in place, `NoopResultWriter` writing
    /// the results' bytes): a real worker given a batch of no-op assignments answers with the very messages
    /// the simulated worker sends for them, byte for byte.
    func testTheSimulatedNoopAnswersAreARealWorkersMessagesByteForByte() async throws {
        let session = try await startSession()
        let assignments = (1...3).map {
            TaskAssignment(
                taskID: "b-2/\($0)", batchID: "b-2", attempt: UInt32($0), kind: .noop, source: "noop",
                taskKey: UInt64(100 + $0), sequence: UInt64($0))
        }
        session.coordinator.send(.taskAssignments(assignments), to: session.worker)
        for assignment in assignments {
            let result = await session.coordinator.next(timeout: .seconds(60)) {
                if case .taskResult(let result) = $0, result.taskKey == assignment.taskKey { result } else { nil }
            }
            XCTAssertNotNil(result, "no result for \(assignment.taskID):\n\(harness.allOutput)")
        }
        let real = session.coordinator.receivedWhole.compactMap { message -> [UInt8]? in
            switch message {
            case .taskResult, .taskResults: WireCodec.encode(message)
            default: nil
            }
        }

        var simulated: [[UInt8]] = []
        WireCodec.encode(.taskAssignments(assignments)).withUnsafeBytes { bytes in
            var scanned: [NoopAssignment] = []
            XCTAssertTrue(NoopAssignmentScan.scan(bytes, into: &scanned))
            var writer = NoopResultWriter()
            for noop in scanned {
                writer.add(
                    taskID: UnsafeRawBufferPointer(rebasing: bytes[noop.taskID]), attempt: noop.attempt,
                    taskKey: noop.taskKey)
            }
            writer.flush(batches: true) { simulated.append(Array($0)) }
        }
        XCTAssertEqual(simulated, real, "the simulation answers no-op tasks unlike a real worker")
        XCTAssertEqual(real.count, 1, "one message for the three results of one wake-up")
        await session.close()
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
        let session = try await startSession(environment: ["SHIFTWORK_CHAINED_TASKS": chaining.rawValue])
        let (coordinator, worker, sink) = (session.coordinator, session.worker, session.sink)
        XCTAssertEqual(
            SimulatedPhotoWorker(chaining: chaining).chaining.announced, session.hello.acceptsChainedTasks,
            "\(chaining)")
        let download = Self.chainedDownload(source: session.url, sink: sink.path)
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

        let photo = try session.realPhoto()
        var simulated = SimulatedPhotoWorker(chaining: chaining, describe: { _ in photo })
        XCTAssertEqual(
            simulated.messages(answering: download), real, "the simulation answers unlike a real worker (\(chaining))")
        XCTAssertEqual(simulated.heldCount, 0, "the chained tilt-shift took the held download")
        // What the assertion above covers: a held download, then the sink output, grouped as the setting says.
        XCTAssertEqual(real.map(\.count), chaining == .together ? [2] : [1, 1], "\(real)")
        let results = Array(real.joined())
        guard results.count == 2, case .output(let held) = results[0].outcome,
            case .output(let stored) = results[1].outcome
        else {
            return XCTFail("unexpected real results: \(real)")
        }
        XCTAssertTrue(held.heldOnWorker && held.data.isEmpty, "\(held)")
        XCTAssertEqual(stored.location, sink.appendingPathComponent("photo-0.jpg").path)
        await session.close()
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
        var download = TaskAssignment(
            taskID: "b-1/0/download", batchID: "b-1", attempt: 1, kind: .download, source: source,
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
