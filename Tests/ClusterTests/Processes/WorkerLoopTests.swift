import Fetching
import Foundation
import Logging
import Messaging
import Wire
import XCTest

@testable import Cluster

/// A `Worker`'s loop (`Worker.serve`, one task group owned by `run()`) against a coordinator played on a
/// real ROUTER socket over loopback: a task's result comes back through the worker's inbox, heartbeats
/// run as a child, and cancelling `run()` stops the worker (goodbye sent) and ends every child with it.
final class WorkerLoopTests: XCTestCase {
    func testAFinishedTaskIsAnsweredAndCancellingRunStopsTheWorkerAndItsChildren() async throws {
        let context = try MessagingContext()
        let coordinator = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
        let bytes = try SyntheticImages.make(width: 8, height: 8, format: .png, seed: 3)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("worker-loop-\(UUID().uuidString).png")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var logger = Logger(label: "worker")
        logger.logLevel = .critical
        let worker = Worker(
            configuration: WorkerConfiguration(
                coordinator: endpoint, slots: 2, workerID: "loop",
                fetch: FetchConfiguration(allowLocalFiles: true)),
            context: context, logger: logger)
        let running = Task { try await worker.run() }

        let hello = await coordinator.next { if case .workerHello(let hello) = $0 { hello } else { nil } }
        XCTAssertEqual(hello?.workerID, "loop")
        let identity = try XCTUnwrap(coordinator.lastIdentity)
        coordinator.send(.welcome(Welcome(heartbeatIntervalMs: 100, coordinatorID: "test")), to: identity)
        coordinator.send(
            .taskAssignment(
                TaskAssignment(
                    taskID: "d1", batchID: "b", attempt: 1, kind: .download,
                    source: file.path, taskKey: 11, sequence: 1)), to: identity)

        // The download ran as an operation; its completion reached the loop through the inbox.
        let result = await coordinator.next { if case .taskResult(let result) = $0 { result } else { nil } }
        XCTAssertEqual(result?.taskKey, 11)
        XCTAssertEqual(result?.outcome, .output(TaskOutput(data: bytes, mediaType: "image/png")))
        // The heartbeat child runs at the welcome's interval and reports the sequence seen.
        let beat = await coordinator.next { if case .heartbeat(let beat) = $0 { beat } else { nil } }
        XCTAssertEqual(beat?.lastSequence, 1)
        XCTAssertEqual(beat?.running, 0)

        running.cancel()
        try await running.value
        let goodbye = await coordinator.next { if case .workerGoodbye(let goodbye) = $0 { goodbye } else { nil } }
        XCTAssertEqual(goodbye?.workerID, "loop")
        let health = await worker.health
        XCTAssertTrue(health.stopping)
        await coordinator.close()
        await context.terminate()
    }
}
