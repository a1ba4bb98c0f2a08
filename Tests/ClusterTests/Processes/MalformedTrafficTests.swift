import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// Garbage on the wire is dropped and counted, never a crash and never a stuck task: thousands of
/// random and mutated frames go to a coordinator and to a worker, which then serve a real batch.
final class MalformedTrafficTests: XCTestCase {
    private var harness: ClusterHarness!

    override func setUp() async throws { harness = try ClusterHarness() }
    override func tearDown() async throws { await harness.stopAll() }

    /// Valid encodings of every kind of message a peer might send, to mutate.
    private static let seeds: [[UInt8]] = [
        WireCodec.encode(.workerHello(WorkerHello(workerID: "fuzzer", slots: 4))),
        WireCodec.encode(.heartbeat(Heartbeat(workerID: "fuzzer", running: 1))),
        WireCodec.encode(
            .taskResult(
                TaskResult(taskID: "b-x/0/download", attempt: 1, outcome: .output(TaskOutput(data: [1, 2, 3]))))),
        WireCodec.encode(
            .submitBatch(SubmitBatch(requestID: "r", items: [BatchItem(source: "http://127.0.0.1:9/x.jpg")]))),
        WireCodec.encode(.statusRequest(StatusRequest(requestID: "s"))),
        WireCodec.encode(.cancelBatch(CancelBatch(batchID: "b-nothing"))),
        WireCodec.encode(
            .taskAssignment(
                TaskAssignment(
                    taskID: "t", batchID: "b", attempt: 1, kind: .tiltShift, source: "x",
                    inputs: [InjectedInput(fromTaskID: "d", data: [0xFF, 0xD8, 0xFF, 0, 1])]))),
        WireCodec.encode(.cancelTask(CancelTask(taskID: "t"))),
    ]

    private static func garbage(_ random: inout SeededGenerator) -> [[UInt8]] {
        var frame: [UInt8]
        switch random.next() % 4 {
        case 0: frame = random.bytes(Int(random.next() % 200))
        case 1:
            frame = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + random.next() % 4) where !frame.isEmpty {
                frame[Int(random.next() % UInt64(frame.count))] = UInt8(truncatingIfNeeded: random.next())
            }
        case 2:
            let seed = seeds[Int(random.next() % UInt64(seeds.count))]
            frame = Array(seed.prefix(Int(random.next() % UInt64(seed.count + 1))))
        default:
            frame = []
        }
        // Sometimes several frames, sometimes none of the expected shape.
        let extra = random.next() % 5 == 0 ? [random.bytes(Int(random.next() % 16))] : []
        return [frame] + extra
    }

    func testCoordinatorAndWorkerSurviveGarbageAndThenServeARealBatch() async throws {
        let endpoint = try await harness.startCoordinator()
        let context = try MessagingContext()
        var random = SeededGenerator(seed: 0xBAD_F00D)

        // 1. Garbage to the coordinator, from a peer that connects like a worker or client would.
        let attacker = try await SocketChannel.open(
            context: context, kind: .dealer, connect: [endpoint], name: "attacker")
        for _ in 0..<3_000 { attacker.send(Self.garbage(&random)) }

        // 2. Garbage to a worker, from a fake coordinator it connects to.
        let fake = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "fake")
        let fakeEndpoint = try XCTUnwrap(fake.boundEndpoint)
        let worker = try harness.launch(
            "worker-under-fire", ["worker", "--worker-id", "target", "--coordinator", fakeEndpoint])
        var incoming = fake.messages.makeAsyncIterator()
        let hello = await incoming.next()
        let identity = try XCTUnwrap(hello?.first, "the worker never said hello:\n\(worker.outputText)")
        for _ in 0..<3_000 { fake.send([identity] + Self.garbage(&random)) }
        // The worker still answers: a heartbeat arrives after the storm, counting what it dropped.
        var sawHeartbeat = false
        var reportedDrops: UInt64 = 0
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, let frames = await incoming.next() {
            if let payload = frames.last, case .heartbeat(let heartbeat)? = try? WireCodec.decode(payload) {
                sawHeartbeat = true
                reportedDrops = heartbeat.droppedMessages
                if reportedDrops > 100 { break }
            }
        }
        XCTAssertTrue(sawHeartbeat, "the worker went silent after garbage:\n\(worker.outputText)")
        XCTAssertGreaterThan(reportedDrops, 100, "the worker counts what it dropped and says so in its heartbeats")
        XCTAssertTrue(worker.isRunning, worker.outputText)
        await attacker.close()
        await fake.close()
        await context.terminate()

        // 3. Both still serve a real batch, and status counts what was dropped.
        try harness.startWorker("honest", endpoint: endpoint, slots: 2)
        let server = try TestHTTPServer()
        defer { server.shutdown() }
        let image = try SyntheticImages.make(width: 64, height: 48, format: .png, seed: 7)
        server.serve(path: "/after-the-storm.png", body: image, contentType: "image/png")
        let out = harness.scratch.appendingPathComponent("storm")
        let (status, output) = try await harness.run([
            "submit", server.url("/after-the-storm.png"), "--out", out.path,
            "--coordinator", endpoint,
        ])
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(output.contains("1 item: 1 succeeded"), output)
        let cluster = try await harness.status(endpoint)
        XCTAssertGreaterThan(cluster.int("dropped_messages"), 100, "malformed messages are counted")
        XCTAssertTrue(harness.processes[0].isRunning, "the coordinator crashed:\n\(harness.processes[0].outputText)")

        // Thousands of bad messages write a few warnings per 10-second window, not one each.
        let coordinatorWarnings =
            harness.processes[0].outputText.components(separatedBy: "dropped a malformed message").count - 1
        XCTAssertGreaterThan(coordinatorWarnings, 0)
        XCTAssertLessThanOrEqual(coordinatorWarnings, 40, "the coordinator's log was flooded")
        let workerWarnings = worker.outputText.components(separatedBy: "dropped a malformed message").count - 1
        XCTAssertGreaterThan(workerWarnings, 0)
        XCTAssertLessThanOrEqual(workerWarnings, 40, "the worker's log was flooded")
    }
}
