import Wire
import XCTest

@testable import Cluster

/// The batch rules, driven directly (no sockets, no operations): what clients are told, when, and what
/// a cancel withdraws.
final class BatchRegistryTests: XCTestCase {
    private let client = PeerIdentity(Array("client".utf8))
    private let other = PeerIdentity(Array("other".utf8))

    private func makeRegistry(
        maxBatchItems: Int = 100, maxPending: Int = 1_000, keepsResults: Bool = true
    ) -> BatchRegistry {
        BatchRegistry(
            limits: .init(maxBatchItems: maxBatchItems, maxPendingItemsPerClient: maxPending),
            keepsResults: keepsResults)
    }

    private func submit(
        _ count: Int, kind: TaskKind = .unspecified, acceptsBatches: Bool = false, requestID: String = "r"
    ) -> SubmitBatch {
        SubmitBatch(
            requestID: requestID,
            items: (0..<count).map { BatchItem(source: "http://x/\($0).jpg", outputName: "o\($0)") },
            kind: kind, acceptsBatches: acceptsBatches)
    }

    /// Plans and registers a batch; returns the answer.
    @discardableResult
    private func accept(
        _ registry: inout BatchRegistry, _ id: String, _ submit: SubmitBatch, from peer: PeerIdentity? = nil
    ) -> [Outbound] {
        let planned = registry.plan(batchID: id, client: peer ?? client, submit: submit)
        return registry.register(planned, answering: submit.requestID, coordinatorID: "c-1").out
    }

    private let done = TaskOutcome.output(TaskOutput(data: [1], mediaType: "image/png", width: 2, height: 3))

    private func messages(_ out: [Outbound], to peer: PeerIdentity) -> [Message] {
        out.filter { $0.peer == peer }.map(\.message)
    }

    /// A queued item costs its registry entry until its turn comes (docs/benchmarks.md, "Memory per queued
    /// task"): the entry's layout is part of that budget.
    func testAnItemsRegistryEntryTakesFortyEightBytes() {
        XCTAssertEqual(MemoryLayout<RegisteredBatch.Item>.stride, 48)
    }

    func testSubmissionsOverALimitOrMalformedAreRefusedWithACodeAndTheRequestID() {
        var registry = makeRegistry(maxBatchItems: 3, maxPending: 4)
        XCTAssertEqual(registry.refusal(of: submit(0), from: client)?.code, .invalidRequest)
        XCTAssertEqual(registry.refusal(of: submit(1, kind: .download), from: client)?.code, .invalidRequest)
        let tooBig = registry.refusal(of: submit(4, requestID: "big"), from: client)
        XCTAssertEqual(tooBig?.code, .limit)
        XCTAssertEqual(tooBig?.requestID, "big")
        XCTAssertTrue(tooBig?.reason.contains("--max-batch-items") == true, "\(String(describing: tooBig))")
        XCTAssertNil(registry.refusal(of: submit(3), from: client))

        accept(&registry, "b-1", submit(3))
        let pending = registry.refusal(of: submit(2), from: client)
        XCTAssertEqual(pending?.code, .limit, "3 unfinished + 2 > 4")
        XCTAssertTrue(pending?.reason.contains("--max-pending-items-per-client") == true)
        XCTAssertNil(registry.refusal(of: submit(2), from: other), "the limit is per client")
        _ = registry.finish(item: 0, of: "b-1", outcome: done)
        XCTAssertNil(registry.refusal(of: submit(2), from: client), "a finished item frees room")
    }

    func testAnAcceptedBatchIsAnsweredAndItsItemsGetDistinctTaskKeys() throws {
        var registry = makeRegistry()
        let out = accept(&registry, "b-1", submit(3, requestID: "req"))
        XCTAssertEqual(
            out.map(\.message),
            [.batchAccepted(BatchAccepted(requestID: "req", batchID: "b-1", itemCount: 3, coordinatorID: "c-1"))])
        accept(&registry, "b-2", submit(2, kind: .noop))
        let images = try XCTUnwrap(registry.batches["b-1"])
        let noops = try XCTUnwrap(registry.batches["b-2"])
        XCTAssertEqual(images.taskKeys(of: 0).count, 2, "a download and a tilt-shift")
        XCTAssertEqual(noops.taskKeys(of: 0).count, 1)
        let keys = (0..<3).flatMap { images.taskKeys(of: $0) } + (0..<2).flatMap { noops.taskKeys(of: $0) }
        XCTAssertEqual(Set(keys).count, keys.count, "unique")
        XCTAssertFalse(keys.contains(0))
        XCTAssertEqual(registry.batchesAccepted, 2)
        XCTAssertEqual(registry.runningBatchCount, 2)
    }

    func testFinishedItemsGoToTheClientOnceAndTheLastIsFollowedByTheSummary() throws {
        var registry = makeRegistry()
        accept(&registry, "b-1", submit(3, acceptsBatches: true))
        let first = try XCTUnwrap(registry.finish(item: 1, of: "b-1", outcome: done))
        XCTAssertEqual(first.finished, ItemFinished(batchID: "b-1", itemIndex: 1, outputName: "o1", outcome: done))
        XCTAssertEqual(first.out.map(\.batchable), [true], "the client said it takes batches")
        XCTAssertNil(first.batchFinished)
        XCTAssertNil(registry.finish(item: 1, of: "b-1", outcome: done), "an item finishes once")
        _ = registry.finish(item: 0, of: "b-1", outcome: .failure(TaskFailure(code: .download, message: "404")))
        let last = try XCTUnwrap(
            registry.finish(item: 2, of: "b-1", outcome: .failure(TaskFailure(code: .cancelled, message: "by request")))
        )
        let summary = BatchFinished(batchID: "b-1", succeeded: 1, failed: 1, cancelled: 1)
        XCTAssertEqual(last.batchFinished, summary)
        XCTAssertEqual(
            messages(last.out, to: client).last, .batchFinished(summary), "the summary follows the last item")
        XCTAssertEqual(registry.runningBatchCount, 0)
        XCTAssertEqual(
            registry.batches["b-1"]?.finishedItem(1),
            ItemFinished(
                batchID: "b-1", itemIndex: 1, outputName: "o1",
                outcome: .output(TaskOutput(data: [], mediaType: "image/png", width: 2, height: 3))),
            "kept without its bytes, to be sent again")
    }

    func testACancelIsAcknowledgedWithTheItemsItCancelledAndNamesTheirTasks() throws {
        var registry = makeRegistry()
        accept(&registry, "b-1", submit(4))
        _ = registry.finish(item: 0, of: "b-1", outcome: done)
        let batch = try XCTUnwrap(registry.batches["b-1"])

        let some = registry.cancel(
            CancelBatch(requestID: "c1", batchID: "b-1", itemIndexes: [0, 2, 2, 99]), from: client)
        XCTAssertTrue(some.isAccepted)
        XCTAssertFalse(some.isWholeBatch)
        XCTAssertEqual(some.items, [2], "item 0 had finished; 99 does not exist; 2 counts once")
        XCTAssertEqual(some.taskKeys, Array(batch.taskKeys(of: 2)))
        XCTAssertEqual(
            some.out.map(\.message),
            [.cancelAccepted(CancelAccepted(requestID: "c1", batchID: "b-1", cancelledItems: 1))])

        let all = registry.cancel(CancelBatch(requestID: "c2", batchID: "b-1"), from: client)
        XCTAssertTrue(all.isWholeBatch)
        XCTAssertEqual(all.items, [1, 3], "item 2 is cancelling already")
        XCTAssertEqual(all.taskKeys, Array(batch.taskKeys(of: 1)) + Array(batch.taskKeys(of: 3)))

        let minorOne = registry.cancel(CancelBatch(batchID: "b-1"), from: client)
        XCTAssertTrue(minorOne.isAccepted && minorOne.out.isEmpty, "no request ID (a minor-1 client): no answer")

        let unknown = registry.cancel(CancelBatch(requestID: "c3", batchID: "b-nothing"), from: client)
        XCTAssertFalse(unknown.isAccepted)
        guard case .refusal(let refusal)? = unknown.out.first?.message else { return XCTFail("\(unknown.out)") }
        XCTAssertEqual(refusal.code, .unknownBatch)
        XCTAssertEqual(refusal.requestID, "c3")
        XCTAssertTrue(
            registry.cancel(CancelBatch(batchID: "b-nothing"), from: nil).out.isEmpty,
            "a journal replay is not answered")

        // The cancelled items finish as their operations end; the summary counts them.
        for index in [1, 2, 3] {
            _ = registry.finish(
                item: index, of: "b-1", outcome: .failure(TaskFailure(code: .cancelled, message: "cancelled")))
        }
        XCTAssertEqual(registry.batches["b-1"]?.summary, BatchFinished(batchID: "b-1", succeeded: 1, cancelled: 3))
    }

    func testAClientThatAttachesCatchesUpThenHearsOfTheRestOnce() throws {
        var registry = makeRegistry()
        accept(&registry, "b-1", submit(3, acceptsBatches: true))
        _ = registry.finish(item: 0, of: "b-1", outcome: done)

        let (answer, started) = registry.attach(
            FetchResults(requestID: "f1", batchID: "b-1"), from: other, coordinatorID: "c-1")
        XCTAssertEqual(
            answer.map(\.message),
            [.batchAccepted(BatchAccepted(requestID: "f1", batchID: "b-1", itemCount: 3, coordinatorID: "c-1"))])
        var progress = try XCTUnwrap(started)
        XCTAssertNil(
            registry.attach(FetchResults(requestID: "f2", batchID: "b-1"), from: other, coordinatorID: "c-1").1,
            "already catching up")

        // While it catches up, items finishing go to the submitter only; the catch-up picks them up.
        let during = try XCTUnwrap(registry.finish(item: 1, of: "b-1", outcome: done))
        XCTAssertEqual(during.out.map(\.peer), [client])
        XCTAssertEqual(registry.catchUp(&progress).finished.map(\.itemIndex), [0, 1])
        XCTAssertTrue(registry.catchUp(&progress).finished.isEmpty, "nothing twice")
        XCTAssertTrue(registry.caughtUp(progress).isEmpty, "not finished yet")

        let after = try XCTUnwrap(registry.finish(item: 2, of: "b-1", outcome: done))
        XCTAssertEqual(Set(after.out.map(\.peer)), [client, other])
        XCTAssertEqual(
            after.out.filter { $0.peer == other }.map(\.batchable), [false, false],
            "an attached client gets plain ItemFinished")
        XCTAssertEqual(messages(after.out, to: other).last, .batchFinished(BatchFinished(batchID: "b-1", succeeded: 3)))
    }

    func testAttachingNeedsAKnownBatchAndKeptResults() {
        var registry = makeRegistry(keepsResults: false)
        accept(&registry, "b-1", submit(1))
        func code(_ batchID: String, _ registry: inout BatchRegistry) -> RefusalCode? {
            if case .refusal(let refusal)? = registry.attach(
                FetchResults(requestID: "f", batchID: batchID), from: other,
                coordinatorID: "c"
            ).0.first?.message {
                return refusal.code
            }
            return nil
        }
        XCTAssertEqual(code("b-nothing", &registry), .unknownBatch)
        XCTAssertEqual(code("b-1", &registry), .noStoredResults)
    }

    func testAManifestItemTellsEachOfItsAudienceTheAddedItemsFirstThenItself() throws {
        var registry = makeRegistry()
        accept(
            &registry, "b-1",
            SubmitBatch(
                requestID: "r", items: [BatchItem(source: "http://x/list.txt", outputName: "a")],
                acceptsBatches: true))
        _ = registry.attach(FetchResults(requestID: "f1", batchID: "b-1"), from: other, coordinatorID: "c-1")
        let added = try registry.expand(item: 0, of: "b-1", entries: ["http://x/a.jpg"])
        let end = try XCTUnwrap(registry.finish(item: 0, of: "b-1", outcome: done, added: added))
        let finished = ItemFinished(batchID: "b-1", itemIndex: 0, outputName: "a", outcome: done)
        XCTAssertEqual(messages(end.out, to: client), [.itemsAdded(added), .itemFinished(finished)])
        XCTAssertEqual(
            end.out.filter { $0.peer == client }.map(\.batchable), [false, true],
            "only the item groups, for the client that takes batches")
        XCTAssertNil(end.batchFinished, "the added item is still to run")
        let last = try XCTUnwrap(registry.finish(item: 1, of: "b-1", outcome: done))
        let summary = try XCTUnwrap(last.batchFinished)
        XCTAssertEqual(
            messages(last.out, to: client).map { if case .batchFinished = $0 { "summary" } else { "item" } },
            ["item", "summary"])
        XCTAssertEqual(messages(last.out, to: client).last, .batchFinished(summary))
    }

    func testAManifestAddsNamedItemsWithinTheLimitsAndCanBeTakenBack() throws {
        var registry = makeRegistry(maxBatchItems: 5)
        accept(
            &registry, "b-1",
            SubmitBatch(requestID: "r", items: [BatchItem(source: "http://x/list.txt", outputName: "a")]))
        let added = try registry.expand(
            item: 0, of: "b-1", entries: ["http://x/a.jpg", "http://y/a.jpg", "http://x/more.txt"])
        XCTAssertEqual(added.firstIndex, 1)
        XCTAssertEqual(added.items.map(\.outputName), ["a-2", "a-3", "more"], "distinct from the batch's names")
        XCTAssertEqual(registry.batches["b-1"]?.items[3].depth, 1)
        let deeper = try registry.expand(item: 3, of: "b-1", entries: ["http://x/b.jpg"])
        XCTAssertThrowsError(try registry.expand(item: 4, of: "b-1", entries: ["http://x/c.jpg"]), "a third level") {
            error in
            XCTAssertTrue("\(error)".contains("manifests may nest"), "\(error)")
        }
        registry.retract(deeper)
        XCTAssertEqual(registry.batches["b-1"]?.items.count, 4)
        XCTAssertThrowsError(try registry.expand(item: 1, of: "b-1", entries: ["1", "2"].map { "http://z/\($0).jpg" }))
        { error in
            XCTAssertTrue("\(error)".contains("--max-batch-items"), "\(error)")
        }
        // The items added after a client's count are announced to it as it catches up.
        var progress = BatchRegistry.CatchUp(
            batchID: "b-1", peer: other, announced: 1, sent: [false],
            summary: BatchFinished(batchID: "b-1", succeeded: 0))
        XCTAssertEqual(registry.catchUp(&progress).added, [added])
    }

    func testOnlyTheLastHundredFinishedBatchesAreKeptByDefault() {
        var registry = makeRegistry()
        XCTAssertEqual(registry.retention.maxFinishedBatches, 100)
        var retired: [String] = []
        for index in 0..<(registry.retention.maxFinishedBatches + 2) {
            accept(&registry, "b-\(index)", submit(1))
            retired += registry.finish(item: 0, of: "b-\(index)", outcome: done)?.retired ?? []
        }
        XCTAssertEqual(retired, ["b-0", "b-1"])
        XCTAssertNil(registry.batches["b-0"])
        XCTAssertEqual(registry.batches.count, registry.retention.maxFinishedBatches)
    }

    func testARestoredBatchKeepsItsRecordedOutcomesAndPlansTasksOnlyForTheRest() throws {
        var registry = makeRegistry(maxBatchItems: 10_000)
        var recovered = RecoveredBatch(
            batchID: "b-1", client: client.bytes, submit: submit(3), acceptedUnixMilliseconds: 0)
        recovered.finished[1] = ItemFinished(
            batchID: "b-1", itemIndex: 1, outputName: "o1",
            outcome: .failure(TaskFailure(code: .download, message: "404")))
        let planned = registry.plan(batchID: "b-1", client: client, submit: recovered.submit, recovered: recovered)
        XCTAssertTrue(planned.taskKeys(of: 1).isEmpty)
        XCTAssertEqual(planned.taskKeys(of: 2).count, 2)
        let (out, retired) = registry.register(planned, answering: nil, coordinatorID: "c-2")
        XCTAssertTrue(out.isEmpty && retired.isEmpty, "a restored batch is not announced again")
        XCTAssertEqual(registry.batches["b-1"]?.summary, BatchFinished(batchID: "b-1", succeeded: 0, failed: 1))
        XCTAssertNil(registry.refusal(of: submit(998), from: client), "2 unfinished items count against the client")
        XCTAssertNotNil(registry.refusal(of: submit(999), from: client))
    }

    func testStatusShowsRunningItemsFromTheDispatcherAndFinishedOnesFromTheRegistry() throws {
        var registry = makeRegistry()
        accept(&registry, "b-1", submit(3))
        _ = registry.finish(item: 2, of: "b-1", outcome: .failure(TaskFailure(code: .download, message: "404")))
        let batch = try XCTUnwrap(registry.batches["b-1"])
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(WorkerHello(workerID: "w", slots: 1), peer: other, now: .now)
        _ = dispatcher.enqueue(
            TaskAssignment(
                taskID: "b-1/0/download", batchID: "b-1", attempt: 1, kind: .download,
                taskKey: batch.taskKeys(of: 0).lowerBound))
        let report = StatusReport(
            dispatcher: dispatcher, registry: registry, queuedTasks: 4, droppedMessages: 0, now: .now)
        let reply = report.reply(to: StatusRequest(requestID: "s", batchID: "b-1"))
        XCTAssertEqual(reply.batches.first?.items.map(\.state), ["running", "queued", "failed"])
        XCTAssertEqual(reply.batches.first?.items.last?.error, "404")
        XCTAssertEqual(reply.queuedTasks, 4)
        XCTAssertTrue(report.reply(to: StatusRequest(requestID: "s")).batches.allSatisfy(\.items.isEmpty))
    }
}
