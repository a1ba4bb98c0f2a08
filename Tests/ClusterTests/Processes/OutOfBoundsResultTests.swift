import Cluster
import Foundation
import Messaging
import Wire
import XCTest

/// A worker's result with a field out of bounds fails the attempt it answers, with why, and in a
/// `TaskResultBatch` only that result: the others count as sent. A real coordinator in this process
/// (`inproc://`), a fake worker on a real socket (`WirePeer`), a real client.
final class OutOfBoundsResultTests: XCTestCase {
    func testOnlyTheResultOutOfBoundsInABatchFailsItsAttempt() async throws {
        let cluster = try await InprocCoordinator.start("bounds-results", maxBatchItems: 10)
        let worker = try await WirePeer(
            kind: .dealer, identity: "w-bounds", connect: cluster.endpoint, context: cluster.context)
        try await ClusterClient.withConnection(
            endpoint: cluster.endpoint, context: cluster.context, responseTimeout: .seconds(30)
        ) { client in
            worker.send(.workerHello(WorkerHello(workerID: "w-bounds", slots: 2, acceptsBatches: true)))
            let welcomed = await worker.next { if case .welcome = $0 { true } else { nil } }
            XCTAssertNotNil(welcomed)

            let events = await client.submit(
                SubmitBatch(
                    requestID: "", items: [BatchItem(source: "noop-0"), BatchItem(source: "noop-1")],
                    kind: .noop, retries: 0))
            var assignments: [TaskAssignment] = []
            while assignments.count < 2,
                let found = await worker.next({ if case .taskAssignment(let a) = $0 { a } else { nil } })
            {
                assignments.append(found)
            }
            XCTAssertEqual(assignments.count, 2)
            let good = try XCTUnwrap(assignments.first)
            let bad = try XCTUnwrap(assignments.last)
            worker.send(
                .taskResults([
                    TaskResult(
                        taskID: good.taskID, attempt: good.attempt, outcome: .output(TaskOutput(data: [])),
                        taskKey: good.taskKey),
                    TaskResult(
                        taskID: bad.taskID, attempt: bad.attempt,
                        outcome: .output(
                            TaskOutput(
                                data: [], mediaType: "image/png",
                                width: .max)), taskKey: bad.taskKey),
                ]))

            var outcomes: [Int: TaskOutcome] = [:]
            for try await event in events {
                switch event {
                case .itemFinished(let item): outcomes[Int(item.itemIndex)] = item.outcome
                case .itemsFinished(let items): for item in items { outcomes[Int(item.itemIndex)] = item.outcome }
                default: break
                }
            }
            XCTAssertEqual(outcomes.count, 2)
            let failures = outcomes.values.compactMap { if case .failure(let f) = $0 { f } else { nil } }
            XCTAssertEqual(failures.count, 1, "only the result out of bounds fails: \(outcomes)")
            XCTAssertTrue(
                failures.first?.message.contains(
                    "TaskResult.output.width is 4294967295, more than the limit of 1048576")
                    == true,
                "\(failures)")
        }
        await worker.close()
        await cluster.stop()
    }
}
