import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// Tasks sent twice, with a real coordinator process and its worker played on a real socket, so that the
/// order of the worker's messages is the test's: a heartbeat ahead of a task's result does not make the
/// task run again, and an assignment the worker really never got is still sent again, counted under its
/// reason (`shiftwork_tasks_resent_total`).
final class DuplicateSendProcessTests: ClusterTestCase {
    private func metrics(_ url: String) async throws -> String { try await TestHTTPClient.get(url).text }

    private func resent(_ reason: String, in page: String) -> Int? {
        MetricsPage.value("shiftwork_tasks_resent_total{reason=\"\(reason)\"}", in: page)
    }

    private func assignment(to worker: WirePeer) async throws -> TaskAssignment {
        let assignment = await worker.next { if case .taskAssignment(let a) = $0 { a } else { nil } }
        return try XCTUnwrap(assignment, harness.allOutput)
    }

    func testAHeartbeatAheadOfItsResultSendsNothingTwiceAndARealLossIsCounted() async throws {
        let (endpoint, metricsURL) = try await harness.startMeteredCoordinator()
        let context = try MessagingContext()
        let worker = try await WirePeer(kind: .dealer, identity: "worker", connect: endpoint, context: context)
        let client = try await WirePeer(kind: .dealer, identity: "client", connect: endpoint, context: context)
        worker.send(.workerHello(WorkerHello(workerID: "worker", slots: 1, acceptsBatches: true)))
        let welcome = await worker.next { if case .welcome(let w) = $0 { w } else { nil } }
        XCTAssertNotNil(welcome, harness.allOutput)

        // 1. The worker reads the assignment and heartbeats before it sends the result (the heartbeat says
        // it received it and no longer holds it): the result that follows is the task's.
        client.send(.submitBatch(SubmitBatch(requestID: "s1", items: [BatchItem(source: "a")], kind: .noop)))
        let first = try await assignment(to: worker)
        worker.send(.heartbeat(Heartbeat(workerID: "worker", lastSequence: first.sequence, holding: [])))
        worker.send(
            .taskResult(
                TaskResult(
                    taskID: first.taskID, attempt: first.attempt, outcome: .output(TaskOutput(data: [])),
                    taskKey: first.taskKey)))
        let finished = await client.next { if case .batchFinished(let f) = $0 { f } else { nil } }
        XCTAssertEqual(finished?.succeeded, 1, harness.allOutput)

        // 2. An assignment the worker never got: missing from two heartbeats in a row, it is sent again.
        client.send(.submitBatch(SubmitBatch(requestID: "s2", items: [BatchItem(source: "b")], kind: .noop)))
        let lost = try await assignment(to: worker)
        for _ in 0..<2 {
            worker.send(.heartbeat(Heartbeat(workerID: "worker", lastSequence: lost.sequence, holding: [])))
        }
        let again = try await assignment(to: worker)
        XCTAssertEqual(again.taskKey, lost.taskKey)
        XCTAssertGreaterThan(again.attempt, lost.attempt, "a new attempt")
        worker.send(
            .taskResult(
                TaskResult(
                    taskID: again.taskID, attempt: again.attempt, outcome: .output(TaskOutput(data: [])),
                    taskKey: again.taskKey)))
        let second = await client.next { if case .batchFinished(let f) = $0 { f } else { nil } }
        XCTAssertEqual(second?.succeeded, 1, harness.allOutput)

        let assignments = worker.received.filter { if case .taskAssignment = $0 { true } else { false } }
        XCTAssertEqual(assignments.count, 3, "the first task once, the lost one twice: \(assignments)")
        let page = try await metrics(metricsURL)
        XCTAssertEqual(MetricsPage.value("shiftwork_assignments_lost_total", in: page), 1, page)
        XCTAssertEqual(resent("assignment_lost", in: page), 1, page)
        for reason in ["worker_lost", "timed_out", "failed", "input_missing", "handed_back"] {
            XCTAssertEqual(resent(reason, in: page), 0, "\(reason): \(page)")
        }
        XCTAssertEqual(
            MetricsPage.value("shiftwork_messages_dropped_total", in: page), 0, "no result was stale: \(page)")

        await worker.close()
        await client.close()
        await context.terminate()
    }
}
