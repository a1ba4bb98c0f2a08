import Wire
import XCTest

@testable import Cluster

/// Retries of finished batches in the registry (`retrySelection`, `reopen`), and their replay from the
/// journal (`RecoveredState`): which items run again, what is refused and why, and that the counts,
/// the audience and the attempts stay consistent.
final class BatchRegistryRetryTests: XCTestCase {
    private let client = PeerIdentity(Array("client".utf8))
    private let other = PeerIdentity(Array("other".utf8))
    private let done = TaskOutcome.output(TaskOutput(data: [1], mediaType: "image/png", width: 2, height: 3))
    private let notFound = TaskOutcome.failure(TaskFailure(code: .download, message: "HTTP 404"))
    private let cancelled = TaskOutcome.failure(TaskFailure(code: .cancelled, message: "cancelled by request"))

    /// A registry with batch b-1 of four items (o0…o3), finished: 0 succeeded, 1 failed, 2 cancelled, 3 succeeded.
    private func finishedBatch(maxPending: Int = 1_000) -> BatchRegistry {
        var registry = BatchRegistry(
            limits: .init(maxBatchItems: 100, maxPendingItemsPerClient: maxPending), keepsResults: true)
        let submit = SubmitBatch(
            requestID: "r", items: (0..<4).map { BatchItem(source: "http://x/\($0).jpg", outputName: "o\($0)") })
        let planned = registry.plan(batchID: "b-1", client: client, submit: submit)
        _ = registry.register(planned, answering: "r", coordinatorID: "c-1")
        registry.noteFailedAttempts(
            [AttemptStatus(task: "download", attempt: 1, code: .download, error: "HTTP 404")], item: 1, of: "b-1")
        for (index, outcome) in [done, notFound, cancelled, done].enumerated() {
            _ = registry.finish(item: index, of: "b-1", outcome: outcome)
        }
        return registry
    }

    private func selection(
        _ registry: BatchRegistry, _ items: [String] = [], batch: String = "b-1"
    ) -> BatchRegistry.RetrySelection {
        registry.retrySelection(RetryBatch(requestID: "retry-1", batchID: batch, items: items))
    }

    private func refusal(_ selection: BatchRegistry.RetrySelection) -> Refusal? {
        if case .refused(let refusal) = selection { return refusal }
        return nil
    }

    func testByDefaultTheFailedAndCancelledItemsRunAgain() {
        XCTAssertEqual(selection(finishedBatch()), .items([1, 2]))
    }

    func testNamedItemsAreFoundByOutputNameSourceOrIndex() {
        let registry = finishedBatch()
        XCTAssertEqual(selection(registry, ["o2"]), .items([2]))
        XCTAssertEqual(selection(registry, ["http://x/1.jpg"]), .items([1]))
        XCTAssertEqual(selection(registry, ["2", "o1", "o2"]), .items([1, 2]), "once each, in index order")
    }

    func testRefusalsSayWhatWasWrongAndWhatToDo() throws {
        let registry = finishedBatch()
        let unknown = try XCTUnwrap(refusal(selection(registry, batch: "b-nope")))
        XCTAssertEqual(unknown.code, .unknownBatch)
        XCTAssertEqual(unknown.requestID, "retry-1")
        XCTAssertTrue(unknown.reason.contains("b-nope"), unknown.reason)

        let noItem = try XCTUnwrap(refusal(selection(registry, ["o9"])))
        XCTAssertEqual(noItem.code, .invalidRequest)
        XCTAssertTrue(
            noItem.reason.contains("has no item o9") && noItem.reason.contains("shiftwork status b-1"), noItem.reason)

        let succeeded = try XCTUnwrap(refusal(selection(registry, ["o0"])))
        XCTAssertEqual(succeeded.code, .invalidRequest)
        XCTAssertTrue(succeeded.reason.contains("item o0 of batch b-1 succeeded"), succeeded.reason)

        let tight = finishedBatch(maxPending: 1)
        XCTAssertEqual(refusal(selection(tight))?.code, .limit, "2 items to re-run, 1 allowed")
        XCTAssertEqual(selection(tight, ["o1"]), .items([1]))
    }

    func testABatchStillRunningIsRefusedNamingTheRunningItem() throws {
        var registry = finishedBatch()
        _ = registry.reopen([1], of: "b-1", for: client, requestID: "r", coordinatorID: "c-1")
        let running = try XCTUnwrap(refusal(selection(registry)))
        XCTAssertTrue(running.reason.contains("batch b-1 is still running (1 of 4 items unfinished)"), running.reason)
        let named = try XCTUnwrap(refusal(selection(registry, ["o1"])))
        XCTAssertTrue(named.reason.contains("item o1 of batch b-1 is still running"), named.reason)
    }

    func testNothingToRerunIsAnsweredWithNoItemsAndChangesNothing() throws {
        var registry = finishedBatch()
        _ = registry.reopen([1, 2], of: "b-1", for: client, requestID: "r", coordinatorID: "c-1")
        _ = registry.finish(item: 1, of: "b-1", outcome: done)
        _ = registry.finish(item: 2, of: "b-1", outcome: done)
        XCTAssertEqual(selection(registry), .items([]))
        let out = registry.reopen([], of: "b-1", for: client, requestID: "r-2", coordinatorID: "c-1")
        XCTAssertEqual(
            out.map(\.message),
            [
                .retryAccepted(
                    RetryAccepted(
                        requestID: "r-2", batchID: "b-1", itemIndexes: [],
                        itemCount: 4, coordinatorID: "c-1"))
            ])
        XCTAssertEqual(registry.runningBatchCount, 0)
    }

    func testAReopenedBatchRunsAgainWithNewTaskKeysAndConsistentCounts() throws {
        var registry = finishedBatch()
        let before = try XCTUnwrap(registry.batches["b-1"])
        let oldKeys = Set((0..<4).flatMap { before.taskKeys(of: $0) })
        XCTAssertEqual(before.summary, BatchFinished(batchID: "b-1", succeeded: 2, failed: 1, cancelled: 1))
        XCTAssertEqual(registry.runningBatchCount, 0)

        let out = registry.reopen([1, 2], of: "b-1", for: other, requestID: "retry-1", coordinatorID: "c-2")
        XCTAssertEqual(out.map(\.peer), [other])
        XCTAssertEqual(
            out.map(\.message),
            [
                .retryAccepted(
                    RetryAccepted(
                        requestID: "retry-1", batchID: "b-1", itemIndexes: [1, 2],
                        itemCount: 4, coordinatorID: "c-2"))
            ])
        let batch = try XCTUnwrap(registry.batches["b-1"])
        XCTAssertEqual(registry.runningBatchCount, 1, "running again")
        XCTAssertEqual(batch.summary, BatchFinished(batchID: "b-1", succeeded: 2, failed: 0, cancelled: 0))
        XCTAssertEqual(batch.unfinishedCount, 2)
        XCTAssertEqual(batch.items.map(\.state), [.succeeded, .unfinished, .unfinished, .succeeded])
        XCTAssertTrue(
            batch.taskKeys(of: 0).isEmpty && batch.taskKeys(of: 3).isEmpty, "succeeded items are not planned again")
        let newKeys = Set([1, 2].flatMap { batch.taskKeys(of: $0) })
        XCTAssertEqual(newKeys.count, 4)
        XCTAssertTrue(newKeys.isDisjoint(with: oldKeys), "a late result of an old attempt cannot match")
        XCTAssertNil(batch.failure(of: 1))
        XCTAssertEqual(batch.failedAttempts(of: 1).map(\.retried), [true], "the earlier run's last attempt was retried")

        // The new results go to the submitter and to the client that asked for the retry, once each.
        let first = try XCTUnwrap(registry.finish(item: 1, of: "b-1", outcome: done))
        XCTAssertEqual(Set(first.out.map(\.peer)), [client, other])
        XCTAssertNil(registry.finish(item: 1, of: "b-1", outcome: done))
        registry.noteFailedAttempts(
            [
                AttemptStatus(
                    task: "download", attempt: 1, code: .download, error: "reset", isTransient: true,
                    retried: true)
            ], item: 2, of: "b-1")
        let last = try XCTUnwrap(registry.finish(item: 2, of: "b-1", outcome: notFound))
        let summary = BatchFinished(batchID: "b-1", succeeded: 3, failed: 1, cancelled: 0)
        XCTAssertEqual(last.batchFinished, summary)
        XCTAssertEqual(registry.batches["b-1"]?.summary, summary)
        XCTAssertEqual(registry.runningBatchCount, 0)
        XCTAssertEqual(registry.batches["b-1"]?.failedAttempts(of: 2).map(\.error), ["reset"])
        XCTAssertEqual(
            registry.batches["b-1"]?.failedAttempts(of: 1).count, 1, "earlier attempts are kept, new ones added")
        XCTAssertEqual(
            StatusReport.attempts(state: "succeeded", failed: registry.batches["b-1"]?.failedAttempts(of: 1) ?? []), 2)
    }

    func testReplayingARetryMakesItsItemsUnfinishedAndDropsEarlierCancellations() throws {
        let submit = SubmitBatch(
            requestID: "r", items: (0..<3).map { BatchItem(source: "http://x/\($0).jpg", outputName: "o\($0)") })
        func finished(_ index: UInt32, _ outcome: TaskOutcome) -> JournalRecord {
            .itemFinished(ItemFinished(batchID: "b-1", itemIndex: index, outputName: "o\(index)", outcome: outcome))
        }
        var records: [JournalRecord] = [
            .batchAccepted(batchID: "b-1", client: Array("client".utf8), submit: submit, unixMilliseconds: 1),
            .batchCancelled(CancelBatch(batchID: "b-1")),
            finished(0, done), finished(1, notFound), finished(2, cancelled),
            .batchRetried(batchID: "b-1", itemIndexes: [1, 2], unixMilliseconds: 2),
        ]
        let accepted = RecoveredState(replaying: records.map(JournalCodec.encode))
        let batch = try XCTUnwrap(accepted.batches.first)
        XCTAssertEqual(batch.finished.keys.sorted(), [0], "the retried items run after a restart")
        XCTAssertFalse(batch.isComplete)
        XCTAssertTrue(batch.cancellations.isEmpty, "the cancel before the retry does not cancel the re-run")
        XCTAssertEqual(
            RecoveredState(replaying: accepted.compactRecords.map(JournalCodec.encode)).batches.first?.finished.keys
                .sorted(),
            [0], "compacting keeps the state")

        records.append(finished(1, done))
        let later = RecoveredState(replaying: records.map(JournalCodec.encode))
        XCTAssertEqual(later.batches.first?.finished.keys.sorted(), [0, 1])
        let compacted = RecoveredState(replaying: later.compactRecords.map(JournalCodec.encode))
        XCTAssertEqual(compacted.batches.first?.finished[1]?.outcome, done, "the re-run's outcome, not the first run's")

        let registry = {
            var registry = BatchRegistry(
                limits: .init(maxBatchItems: 100, maxPendingItemsPerClient: 100), keepsResults: true)
            let planned = registry.plan(batchID: "b-1", client: client, submit: submit, recovered: later.batches.first)
            _ = registry.register(planned, answering: nil, coordinatorID: "c-3")
            return registry
        }()
        let restored = try XCTUnwrap(registry.batches["b-1"])
        XCTAssertEqual(restored.items.map(\.state), [.succeeded, .succeeded, .unfinished])
        XCTAssertEqual(restored.taskKeys(of: 2).count, 2, "only the unfinished retried item is planned")
        XCTAssertEqual(
            RecoveredState(replaying: [
                JournalCodec.encode(.batchRetried(batchID: "b-x", itemIndexes: [0], unixMilliseconds: 0))
            ])
            .skippedRecords, 1, "a retry of an unknown batch is skipped")
    }
}
