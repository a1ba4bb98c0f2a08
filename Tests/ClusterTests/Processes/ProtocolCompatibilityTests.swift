import Foundation
import Messaging
import ShiftworkTestSupport
import Synchronization
import Wire
import XCTest

/// Protocol minor 2 keeps minor-1 peers working: a minor-1 client and worker with this coordinator, and
/// this worker with a minor-1 coordinator. The minor-1 side is played on a real socket with the bytes a
/// minor-1 peer sends (no minor-2 field set, envelope minor 1), and acts as a minor-1 peer does on what
/// it receives (it reads only minor-1 fields).
final class ProtocolCompatibilityTests: ClusterTestCase {
    func testAMinorOneClientAndWorkerStillWorkWithThisCoordinator() async throws {
        let endpoint = try await harness.startCoordinator()
        let context = try MessagingContext()
        let worker = try await WirePeer(
            kind: .dealer, identity: "old-worker", connect: endpoint, envelopeMinor: 1, context: context)
        let client = try await WirePeer(
            kind: .dealer, identity: "old-client", connect: endpoint, envelopeMinor: 1, context: context)

        // A minor-1 worker knows the refusal that asks it to register by its text.
        worker.send(.heartbeat(Heartbeat(workerID: "old-worker")))
        let refusal = await worker.next { if case .refusal(let r) = $0 { r } else { nil } }
        XCTAssertEqual(refusal?.reason, "unknown worker: send hello", "\(String(describing: refusal))")
        worker.send(.workerHello(WorkerHello(workerID: "old-worker", slots: 1, acceptsBatches: true)))
        let welcome = await worker.next { if case .welcome(let w) = $0 { w } else { nil } }
        XCTAssertNotNil(welcome, harness.allOutput)

        client.send(
            .submitBatch(
                SubmitBatch(requestID: "s1", items: [BatchItem(source: "a"), BatchItem(source: "b")], kind: .noop)))
        let accepted = await client.next { if case .batchAccepted(let a) = $0 { a } else { nil } }
        let batchID = try XCTUnwrap(accepted?.batchID, harness.allOutput)
        let assignment = await worker.next { if case .taskAssignment(let a) = $0 { a } else { nil } }
        let task = try XCTUnwrap(assignment, "the worker's one slot gets a task")

        // A cancel without a request ID: carried out, not answered; the worker is told the task's ID.
        client.send(.cancelBatch(CancelBatch(batchID: batchID)))
        let cancel = await worker.next { if case .cancelTask(let c) = $0 { c } else { nil } }
        XCTAssertEqual(cancel?.taskID, task.taskID, "a minor-1 worker finds the task by its ID")
        worker.send(
            .taskResult(
                TaskResult(
                    taskID: task.taskID, attempt: task.attempt,
                    outcome: .failure(TaskFailure(code: .cancelled)), taskKey: task.taskKey)))
        let finished = await client.next { if case .batchFinished(let f) = $0 { f } else { nil } }
        XCTAssertEqual(finished, BatchFinished(batchID: batchID, succeeded: 0, cancelled: 2))
        XCTAssertEqual(
            client.received.compactMap { if case .itemFinished(let i) = $0 { Int(i.itemIndex) } else { nil } }.sorted(),
            [0, 1],
            "plain ItemFinished, as the client did not accept batches")
        XCTAssertFalse(
            client.received.contains { if case .cancelAccepted = $0 { true } else { false } },
            "CancelAccepted is a body a minor-1 client does not know: never sent to it")

        // A refused cancel without a request ID is refused without one, as before.
        client.send(.cancelBatch(CancelBatch(batchID: "b-nothing")))
        let refused = await client.next { if case .refusal(let r) = $0 { r } else { nil } }
        XCTAssertEqual(refused?.requestID, "")
        XCTAssertEqual(refused?.code, .unknownBatch)

        await worker.close()
        await client.close()
        await context.terminate()
    }

    func testThisWorkerStillWorksWithAMinorOneCoordinator() async throws {
        let context = try MessagingContext()
        let coordinator = try await WirePeer(
            kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", envelopeMinor: 1, context: context)
        let endpoint = try XCTUnwrap(coordinator.channel.boundEndpoint)
        let process = try harness.launch(
            "worker", ["worker", "--worker-id", "new-worker", "--slots", "1", "--coordinator", endpoint])
        let url = try server.serveSyntheticImages(1, prefix: "stalled") { _, _ in .stall }[0]

        let hello = await coordinator.next { if case .workerHello(let h) = $0 { h } else { nil } }
        XCTAssertEqual(hello?.workerID, "new-worker", process.outputText)
        let identity = try XCTUnwrap(coordinator.lastIdentity)
        coordinator.send(.welcome(Welcome(heartbeatIntervalMs: 200)), to: identity)
        // The refusal a minor-1 coordinator sends an unknown worker has no code: the worker knows it by its
        // text, registers again, and does not stop.
        coordinator.send(.refusal(Refusal(reason: "unknown worker: send hello")), to: identity)
        let again = await coordinator.next { if case .workerHello(let h) = $0 { h } else { nil } }
        XCTAssertNotNil(again, "the worker said hello again:\n\(process.outputText)")
        XCTAssertTrue(process.isRunning, process.outputText)

        // A minor-1 coordinator's cancel names the task by its ID only.
        coordinator.send(.welcome(Welcome(heartbeatIntervalMs: 200)), to: identity)
        coordinator.send(
            .taskAssignment(
                TaskAssignment(
                    taskID: "b-1/0/download", batchID: "b-1", attempt: 1, kind: .download,
                    source: url, taskKey: 5, sequence: 1)), to: identity)
        let holding = await coordinator.next { if case .heartbeat(let h) = $0, h.holding == [5] { h } else { nil } }
        XCTAssertNotNil(holding, "the worker runs the download:\n\(process.outputText)")
        coordinator.send(.cancelTask(CancelTask(taskID: "b-1/0/download", reason: "cancelled")), to: identity)
        let result = await coordinator.next { if case .taskResult(let r) = $0 { r } else { nil } }
        XCTAssertEqual(result?.taskKey, 5)
        guard case .failure(let failure)? = result?.outcome else {
            return XCTFail("\(String(describing: result))\n\(process.outputText)")
        }
        XCTAssertEqual(failure.code, .cancelled)

        await coordinator.close()
        await context.terminate()
    }
}
