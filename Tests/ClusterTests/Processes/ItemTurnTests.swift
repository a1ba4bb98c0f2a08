import Foundation
import Logging
import Messaging
import Wire
import XCTest

@testable import Cluster

/// Items get their tasks in turn (`BatchRun.startNext`), in a real coordinator and a real worker
/// over `inproc://`: a batch larger than the window holds tasks for the window only, its other items
/// are queued in status, an item cancelled before its turn finishes as cancelled and leaves the queue, and
/// the rest of the batch runs to its end once a worker comes.
final class ItemTurnTests: XCTestCase {
    func testItemsBeyondTheWindowWaitWithoutOperationsCanBeCancelledAndRunOnceAWorkerComes() async throws {
        let running = try await InprocCoordinator.start("item-turn", maxBatchItems: 20_000)
        let (coordinator, endpoint, context) = (running.coordinator, running.endpoint, running.context)
        var logger = Logger(label: "item-turn")
        logger.logLevel = .critical
        var worker: Worker?
        var workerTask: Task<Void, any Error>?
        do {
            try await ClusterClient.withConnection(endpoint: endpoint, context: context, responseTimeout: .seconds(30))
            {
                client in
                let items = 10_000
                let window = BatchRun.maxStartedItems
                XCTAssertLessThan(window, items - 2, "the batch must be larger than the window for this test")
                var events = await client.submit(
                    SubmitBatch(
                        requestID: "", items: (0..<items).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
                ).makeAsyncIterator()
                guard case .accepted(let batchID, _)? = try await events.next() else { return XCTFail("not accepted") }

                let before = await Self.figures(of: coordinator, batchID)
                XCTAssertEqual(before.planned, window, "only the window's items have tasks")
                XCTAssertEqual(before.queued, items, "every task counts as queued, planned or not")
                let status = try await client.status(batchID: batchID)
                let last = try XCTUnwrap(status.batches.first?.items.last)
                XCTAssertEqual(last.itemIndex, UInt32(items - 1))
                XCTAssertEqual(last.state, "queued")

                // Two items beyond the window and one inside it.
                let cancelled: [UInt32] = [0, UInt32(items - 2), UInt32(items - 1)]
                let accepted = try await client.cancel(batchID: batchID, itemIndexes: cancelled)
                XCTAssertEqual(accepted.cancelledItems, 3)

                let newWorker = Worker(
                    configuration: WorkerConfiguration(coordinator: endpoint, slots: 8, workerID: "turn-worker"),
                    context: context, logger: logger)
                worker = newWorker
                workerTask = Task { try await newWorker.run() }

                var outcomes: [UInt32: TaskOutcome] = [:]
                var summary: BatchFinished?
                while let event = try await events.next() {
                    switch event {
                    case .itemFinished(let item): outcomes[item.itemIndex] = item.outcome
                    case .itemsFinished(let finished): for item in finished { outcomes[item.itemIndex] = item.outcome }
                    case .finished(let finished): summary = finished
                    case .accepted, .attached, .retrying, .itemsAdded: break
                    }
                }
                XCTAssertEqual(summary?.succeeded, UInt32(items - 3))
                XCTAssertEqual(summary?.cancelled, 3)
                XCTAssertEqual(outcomes.count, items, "every item finished once")
                for index in cancelled {
                    guard case .failure(let failure)? = outcomes[index] else {
                        return XCTFail("item \(index) did not fail")
                    }
                    XCTAssertEqual(failure.code, .cancelled)
                    XCTAssertTrue(failure.message.contains("cancelled by request"), failure.message)
                }
                let after = await Self.figures(of: coordinator, batchID)
                XCTAssertEqual(after.queued, 0)
                XCTAssertEqual(after.operations, 0, "the finished batch's running part is let go")
            }
        } catch {
            await Self.stop(worker, workerTask, running)
            throw error
        }
        await Self.stop(worker, workerTask, running)
    }

    private struct Figures: Sendable {
        var planned = 0, queued = 0, operations = 0
    }

    private static func figures(of coordinator: isolated Coordinator, _ batchID: String) -> Figures {
        Figures(
            planned: coordinator.core.runs[batchID]?.items.count ?? 0, queued: coordinator.queuedTaskCount,
            operations: coordinator.core.runs.count)
    }

    private static func stop(
        _ worker: Worker?, _ task: Task<Void, any Error>?, _ running: InprocCoordinator
    ) async {
        await worker?.stop()
        _ = try? await task?.value
        await running.stop()
    }
}
