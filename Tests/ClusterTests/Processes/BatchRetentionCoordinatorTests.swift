import Foundation
import Messaging
import Wire
import XCTest

@testable import Cluster

/// The retention of finished batches in a real coordinator: what a retired batch leaves behind.
final class BatchRetentionCoordinatorTests: XCTestCase {
    /// A real coordinator (over `inproc://`, no workers) and a real client: a large batch is cancelled
    /// while its tasks wait in the dispatcher and for their turn, and once it finished and was retired,
    /// nothing of it is left: no registry entry, no running part in the core, no tasks, no task keys.
    func testACancelledBatchLeavesNothingBehindInTheCoordinatorOnceRetired() async throws {
        let running = try await InprocCoordinator.start(
            "retention", maxBatchItems: 20_000,
            retention: BatchRetention(maxFinishedBatches: 0))
        let coordinator = running.coordinator
        do {
            try await ClusterClient.withConnection(
                endpoint: running.endpoint, context: running.context, responseTimeout: .seconds(30)
            ) { client in
                let items = 10_000  // more than a batch starts at once (`BatchRun.maxStartedItems`)
                var events = await client.submit(
                    SubmitBatch(
                        requestID: "", items: (0..<items).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
                ).makeAsyncIterator()
                guard case .accepted(let batchID, _)? = try await events.next() else { return XCTFail("not accepted") }
                try await waitUntil("its tasks reach the dispatcher") {
                    await Self.leftovers(of: coordinator, batchID).dispatched > 0
                }
                let started = await Self.leftovers(of: coordinator, batchID)
                XCTAssertEqual(started.runs, 1)
                XCTAssertEqual(started.startedItems, BatchRun.maxStartedItems)

                let accepted = try await client.cancel(batchID: batchID)
                XCTAssertEqual(accepted.cancelledItems, UInt32(items))
                var summary: BatchFinished?
                while let event = try await events.next() {
                    if case .finished(let finished) = event { summary = finished }
                }
                XCTAssertEqual(summary?.cancelled, UInt32(items))

                let left = await Self.leftovers(of: coordinator, batchID)
                XCTAssertEqual(left.batches, 0, "retired: no items, outcomes or audience kept")
                XCTAssertEqual(left.retiredSummary, summary)
                XCTAssertEqual(left.runs, 0, "its running part is let go")
                XCTAssertEqual(left.tasks, 0, "no task of the batch is held by the dispatcher")
                XCTAssertEqual(left.queued, 0)
                XCTAssertEqual(left.owners, 0, "no task key leads to an item")
                do {
                    _ = try await client.status(batchID: batchID)
                    XCTFail("the status of a retired batch is refused")
                } catch ClusterClientError.refused(let reason) {
                    XCTAssertTrue(reason.contains("was retired") && reason.contains("--keep-finished-batches"), reason)
                }
            }
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    /// What a coordinator holds, read on its actor.
    private struct Leftovers: Sendable {
        /// Tasks in the dispatcher's queue; `queued` adds those not dispatched yet.
        var batches = 0, runs = 0, startedItems = 0, tasks = 0, dispatched = 0, queued = 0, owners = 0
        var retiredSummary: BatchFinished?
    }

    private static func leftovers(of coordinator: isolated Coordinator, _ batchID: String) -> Leftovers {
        Leftovers(
            batches: coordinator.registry.batches.count, runs: coordinator.core.runs.count,
            startedItems: coordinator.core.runs[batchID]?.items.count ?? 0,
            tasks: coordinator.dispatcher.entries.count, dispatched: coordinator.dispatcher.queuedTaskCount,
            queued: coordinator.queuedTaskCount,
            owners: coordinator.core.owners.count, retiredSummary: coordinator.registry.retiredBatches[batchID]?.summary
        )
    }

    /// Polls `condition` (every 20 ms, for at most 30 s: a bound on a hang, not a measure of speed).
    private func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        for _ in 0..<1_500 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("timed out waiting until \(what)")
        throw CancellationError()
    }
}
