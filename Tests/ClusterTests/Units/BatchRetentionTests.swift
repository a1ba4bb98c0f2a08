import Foundation
import Wire
import XCTest

@testable import Cluster

/// The retention of finished batches (`BatchRetention`), driven on the registry directly: what a finished
/// batch still holds, when it is retired (by count, by age), and what a request naming it is answered.
final class BatchRetentionTests: XCTestCase {
    private let client = PeerIdentity(Array("client".utf8))
    private let start = ContinuousClock.now
    private let done = TaskOutcome.output(TaskOutput(data: [], mediaType: "image/png", width: 2, height: 3))

    private func makeRegistry(keep: Int = 100, for age: Duration = .seconds(3600)) -> BatchRegistry {
        BatchRegistry(
            limits: .init(maxBatchItems: 1_000, maxPendingItemsPerClient: 10_000), keepsResults: true,
            retention: BatchRetention(maxFinishedBatches: keep, maxFinishedAge: age))
    }

    /// Accepts a batch of `count` items and finishes them all at `at`; returns the batches retired meanwhile.
    @discardableResult
    private func run(
        _ registry: inout BatchRegistry, _ id: String, items count: Int = 2, at: Duration = .zero
    ) -> [String] {
        let submit = SubmitBatch(requestID: "r", items: (0..<count).map { BatchItem(source: "http://x/\($0).jpg") })
        let planned = registry.plan(batchID: id, client: client, submit: submit)
        var retired = registry.register(planned, answering: "r", coordinatorID: "c", now: start + at).retired
        for index in 0..<count {
            retired += registry.finish(item: index, of: id, outcome: done, now: start + at)?.retired ?? []
        }
        return retired
    }

    private func refusal(_ message: Message?) -> Refusal? {
        if case .refusal(let refusal)? = message { return refusal }
        return nil
    }

    func testARetiredBatchHoldsNothingButItsRecordAndRequestsNamingItAreRefusedWithTheRule() throws {
        var registry = makeRegistry(keep: 2)
        let attached = PeerIdentity(Array("attached".utf8))
        let submit = SubmitBatch(
            requestID: "r", items: [BatchItem(source: "http://x/a.jpg"), BatchItem(source: "http://x/b.jpg")])
        _ = registry.register(
            registry.plan(batchID: "b-0", client: client, submit: submit), answering: "r", coordinatorID: "c")
        let (_, catchUp) = registry.attach(
            FetchResults(requestID: "f", batchID: "b-0"), from: attached, coordinatorID: "c")
        _ = registry.caughtUp(try XCTUnwrap(catchUp))
        _ = registry.finish(item: 0, of: "b-0", outcome: done, now: start)
        let last = try XCTUnwrap(
            registry.finish(
                item: 1, of: "b-0", outcome: .failure(TaskFailure(code: .download, message: "404")),
                now: start))
        XCTAssertEqual(Set(last.out.map(\.peer)), [client, attached], "the attached client is told the batch finished")
        XCTAssertNotNil(registry.batches["b-0"], "kept while within the retention")

        XCTAssertEqual(run(&registry, "b-1"), [])
        XCTAssertEqual(run(&registry, "b-2"), ["b-0"], "three finished batches, two kept: the oldest goes")
        XCTAssertNil(registry.batches["b-0"], "its items, outcomes and audience are let go")
        XCTAssertEqual(registry.batches.count, 2)
        XCTAssertEqual(registry.runningBatchCount, 0)

        let now = start + .seconds(300)
        let reason =
            "batch b-0 finished and was retired 5 min ago: this coordinator keeps the last 2 finished batches "
            + "(--keep-finished-batches, SHIFTWORK_KEEP_FINISHED_BATCHES). It had 2 items: 1 succeeded, 1 failed, 0 cancelled"
        let status = StatusReport(
            dispatcher: Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5)),
            registry: registry, queuedTasks: 0, droppedMessages: 0, now: now)
        let statusRefusal = try XCTUnwrap(refusal(status.answer(to: StatusRequest(requestID: "s", batchID: "b-0"))))
        XCTAssertEqual(statusRefusal.code, .unknownBatch)
        XCTAssertEqual(statusRefusal.requestID, "s")
        XCTAssertTrue(statusRefusal.reason.hasPrefix(reason), statusRefusal.reason)
        guard case .statusReply(let all) = status.answer(to: StatusRequest(requestID: "s")) else {
            return XCTFail("a status of every batch is a reply")
        }
        XCTAssertEqual(all.batches.map(\.batchID), ["b-1", "b-2"], "a retired batch is not listed")
        guard case .statusReply(let unknown) = status.answer(to: StatusRequest(requestID: "s", batchID: "b-never"))
        else {
            return XCTFail("a batch never known is answered as before: an empty reply")
        }
        XCTAssertTrue(unknown.batches.isEmpty)

        let fetch = try XCTUnwrap(
            refusal(
                registry.attach(
                    FetchResults(requestID: "f2", batchID: "b-0"), from: attached,
                    coordinatorID: "c", now: now
                ).0.first?.message))
        XCTAssertEqual(fetch.code, .unknownBatch)
        XCTAssertTrue(fetch.reason.hasPrefix(reason), fetch.reason)
        let cancel = registry.cancel(CancelBatch(requestID: "x", batchID: "b-0"), from: client, now: now)
        XCTAssertFalse(cancel.isAccepted)
        XCTAssertEqual(refusal(cancel.out.first?.message)?.reason.hasPrefix(reason), true)
    }

    func testAFinishedBatchIsRetiredOnceItIsOlderThanTheRetentionAge() throws {
        var registry = makeRegistry(keep: 100, for: .seconds(60))
        run(&registry, "b-0", at: .zero)
        run(&registry, "b-1", at: .seconds(30))
        XCTAssertEqual(registry.retireExpired(now: start + .seconds(59)), [])
        XCTAssertEqual(registry.retireExpired(now: start + .seconds(60)), ["b-0"])
        XCTAssertEqual(Array(registry.batches.keys), ["b-1"])
        XCTAssertEqual(
            run(&registry, "b-2", at: .seconds(95)), ["b-1"], "finishing a batch retires the expired ones too")
        let reason = try XCTUnwrap(registry.retiredBatches["b-1"]?.refusalReason(now: start + .seconds(100)))
        XCTAssertTrue(
            reason.contains(
                "retired 5 s ago: this coordinator keeps a finished batch for 60 s (--keep-finished-for, "
                    + "SHIFTWORK_KEEP_FINISHED_FOR)"), reason)
        XCTAssertEqual(registry.retireExpired(now: start + .seconds(3600)), ["b-2"])
        XCTAssertTrue(registry.batches.isEmpty)
    }

    func testWithoutRetentionAFinishedBatchIsRetiredAtOnceAfterItsClientWasTold() throws {
        var registry = makeRegistry(keep: 0)
        let submit = SubmitBatch(requestID: "r", items: [BatchItem(source: "http://x/a.jpg")])
        _ = registry.register(
            registry.plan(batchID: "b-0", client: client, submit: submit), answering: "r", coordinatorID: "c")
        let end = try XCTUnwrap(registry.finish(item: 0, of: "b-0", outcome: done))
        XCTAssertEqual(end.retired, ["b-0"])
        XCTAssertEqual(end.out.last?.message, .batchFinished(BatchFinished(batchID: "b-0", succeeded: 1)))
        XCTAssertTrue(registry.batches.isEmpty)
    }

    func testWhatIsRememberedOfRetiredBatchesIsBounded() {
        var registry = makeRegistry(keep: 0)
        let count = BatchRetention.retiredBatchesRemembered + 5
        for index in 0..<count { run(&registry, "b-\(index)", items: 1) }
        XCTAssertEqual(registry.retiredBatches.count, BatchRetention.retiredBatchesRemembered)
        XCTAssertNil(registry.retiredBatches["b-4"], "the oldest records are dropped first")
        XCTAssertNotNil(registry.retiredBatches["b-5"])
        XCTAssertTrue(registry.batches.isEmpty)
    }

    func testTheDispatchQueueLetsGoOfRemovedTasksOnceItIsEmpty() {
        // Tasks of a cancelled batch are removed from the queue lazily; without workers nothing pops them.
        var queue = FairShareQueue()
        for key in TaskKey(1)...4_096 { queue.enqueue(key, batch: "b") }
        for key in TaskKey(1)...4_096 { queue.remove(key) }
        XCTAssertTrue(queue.isEmpty)
        XCTAssertTrue(queue.removed.isEmpty, "nothing of the removed tasks is held")
        queue.enqueue(5_000, batch: "c", urgency: 1)
        XCTAssertEqual(queue.dequeue(), 5_000)
    }
}
