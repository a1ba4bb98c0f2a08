import Foundation
import Wire
import XCTest

@testable import Cluster

/// A journal written from the core's effects, replayed into a new core after a "restart": the same
/// registry state, and what was unfinished runs again with its failed attempts counted.
final class CoordinatorCoreReplayTests: XCTestCase {
    private typealias F = CoreFixtures
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("core-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Handles `event` and writes what it journals, as the actor does.
    private func handle(_ event: CoreEvent, _ driver: inout CoreDriver, journal: Journal) throws -> [CoreEffect] {
        let effects = driver.handle(event)
        for entry in effects.journaled { try journal.record(entry) }
        try journal.flush()
        return effects
    }

    func testReplayingTheJournalGivesTheSameStateAndRunsTheUnfinishedItemsAgain() throws {
        var before = CoreDriver(keepsResults: true)
        let states: [RegisteredBatch.ItemState]
        do {
            let (journal, recovered) = try Journal.open(directory: directory, coordinatorID: "c-1")
            XCTAssertTrue(recovered.batches.isEmpty)
            _ = try handle(
                .workerHello(WorkerHello(workerID: "w1", slots: 4), from: MessageSender(identity: F.w1, key: nil)),
                &before, journal: journal)
            let sent = try handle(
                .submit(F.noops(3, retries: 3), from: F.client, batchID: "b1"), &before, journal: journal
            ).assignments()
            XCTAssertEqual(sent.count, 3)
            _ = try handle(
                .results([.success(sent[0], TaskOutput(data: [], mediaType: ""))], from: F.w1), &before,
                journal: journal)
            _ = try handle(
                .cancel(CancelBatch(requestID: "c", batchID: "b1", itemIndexes: [1]), from: F.client.identity),
                &before, journal: journal)
            let failed = try handle(
                .results(
                    [.failure(sent[2], TaskFailure(code: .download, message: "503", isTransient: true))],
                    from: F.w1), &before, journal: journal)
            XCTAssertEqual(failed.timers.count, 1, "item 2 waits for its retry when the coordinator stops")
            states = try XCTUnwrap(before.core.registry.batches["b1"]).items.map(\.state)
            XCTAssertEqual(states, [.succeeded, .cancelled, .unfinished])
        }

        let (journal, recovered) = try Journal.open(directory: directory, coordinatorID: "c-2")
        var after = CoreDriver(incarnation: recovered.incarnation, keepsResults: true)
        after.handle(.restore(recovered, wallClockMilliseconds: after.wallClock))
        XCTAssertEqual(
            after.core.registry.batches["b1"]?.items.map(\.state), states, "the same state as before the restart")
        XCTAssertEqual(after.core.runs["b1"]?.items.keys.sorted(), [2], "only the unfinished item runs again")
        XCTAssertEqual(after.core.runs["b1"]?.items[2]?.failedAttempts.count, 1, "its journaled attempt counts")

        let resent = after.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 4), from: MessageSender(identity: F.w1, key: nil)))
        let assignment = try XCTUnwrap(resent.assignments().first)
        XCTAssertEqual(assignment.taskID, "b1/2")
        XCTAssertGreaterThan(
            assignment.attempt, 1_000, "numbered from this start: no result of the last start matches it")
        try journal.flush()  // the journal (and the directory's lock) is held until here
    }
}
