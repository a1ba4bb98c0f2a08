import Wire
import XCTest

@testable import Cluster

/// The coordinator's rules, event by event, without sockets: a batch's items run as a group of tasks with
/// dependencies, injection, retries and cancellation (`CoordinatorCore`).
final class CoordinatorCoreTests: XCTestCase {
    private typealias F = CoreFixtures

    private func driver(slots: UInt32 = 4, _ configure: (inout CoreDriver) -> Void = { _ in }) -> CoreDriver {
        var driver = CoreDriver()
        configure(&driver)
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: slots), from: MessageSender(identity: F.w1, key: nil)))
        return driver
    }

    func testAnAcceptedBatchIsJournaledBeforeItIsAnsweredAndItsDownloadsAreDispatched() {
        var driver = driver()
        let effects = driver.handle(.submit(F.images(2), from: F.client, batchID: "b1"))
        let journaled = effects.position {
            if case .recordDurably(.accepted(let id, _, _, _), _) = $0 { id == "b1" } else { false }
        }
        let answered = effects.position {
            if case .send(let out) = $0 {
                out.contains { if case .batchAccepted = $0.message { true } else { false } }
            } else {
                false
            }
        }
        XCTAssertNotNil(journaled)
        XCTAssertNotNil(answered)
        XCTAssertLessThan(journaled ?? .max, answered ?? .min, "journaled before the client hears of it")
        XCTAssertEqual(effects.assignments(to: F.w1).map(\.taskID), ["b1/0/download", "b1/1/download"])
        XCTAssertEqual(driver.core.queuedTaskCount, 2, "the two tilt-shifts wait for their downloads")
    }

    func testABatchTheJournalCannotRecordIsRefusedAndNothingOfItRunsOrStays() {
        var driver = driver()
        let effects = driver.handle(.submit(F.images(2), from: F.client, batchID: "b1"), journalRefuses: true)
        let refusals = effects.sent.compactMap { if case .refusal(let refusal) = $0.message { refusal } else { nil } }
        XCTAssertEqual(refusals.map(\.code), [.unavailable])
        XCTAssertTrue(refusals.first?.reason.contains("the disk is full") == true, "\(refusals)")
        XCTAssertFalse(
            effects.sent.contains { if case .batchAccepted = $0.message { true } else { false } }, "never told accepted"
        )
        XCTAssertTrue(effects.assignments(to: F.w1).isEmpty, "nothing of it dispatched")
        XCTAssertNil(driver.core.registry.batches["b1"])
        XCTAssertTrue(driver.core.pendingAcceptances.isEmpty)
        XCTAssertEqual(driver.core.queuedTaskCount, 0)
        // The next submission, recorded, runs as usual.
        let next = driver.handle(.submit(F.images(1), from: F.client, batchID: "b2"))
        XCTAssertEqual(next.assignments(to: F.w1).map(\.taskID), ["b2/0/download"])
    }

    func testADownloadsOutputIsInjectedIntoItsTiltShiftWhoseResultFinishesTheItem() throws {
        var driver = driver()
        let download = try XCTUnwrap(
            driver.handle(.submit(F.images(1), from: F.client, batchID: "b1")).assignments().first)
        let next = driver.handle(.results([.success(download, F.image)], from: F.w1))
        let tiltShift = try XCTUnwrap(next.assignments(to: F.w1).first, "\(next)")
        XCTAssertEqual(tiltShift.kind, .tiltShift)
        XCTAssertEqual(tiltShift.inputs.map(\.fromTaskID), ["b1/0/download"], "the download's output is its input")
        XCTAssertEqual(tiltShift.inputs.first?.onWorker, true, "by reference: the image stayed on its worker")
        XCTAssertTrue(next.finishedItems.isEmpty)

        let end = driver.handle(.results([.success(tiltShift, F.filtered)], from: F.w1))
        XCTAssertEqual(end.finishedItems.map(\.outcome), [.output(F.filtered)])
        XCTAssertEqual(end.batchesFinished.map(\.succeeded), [1])
        let journaled = end.position { if case .journal(.finished) = $0 { true } else { false } }
        let told = end.position { if case .send = $0 { true } else { false } }
        XCTAssertLessThan(journaled ?? .max, told ?? .min, "the finished item is journaled before it is sent")
        XCTAssertTrue(driver.core.runs.isEmpty, "a finished batch leaves nothing running")
        XCTAssertTrue(driver.core.owners.isEmpty)
    }

    func testAFailedDownloadFailsItsItemWithTheDownloadsOwnFailureAndItsTiltShiftIsNeverSent() throws {
        var driver = driver()
        let download = try XCTUnwrap(
            driver.handle(.submit(F.images(1), from: F.client, batchID: "b1")).assignments().first)
        let end = driver.handle(
            .results([.failure(download, TaskFailure(code: .download, message: "HTTP 404 for /0.jpg"))], from: F.w1))
        XCTAssertTrue(end.assignments().isEmpty, "the dependent is not sent")
        let item = try XCTUnwrap(end.finishedItems.first)
        guard case .failure(let failure) = item.outcome else { return XCTFail("\(item)") }
        XCTAssertEqual(failure.code, .download, "the cause, not a dependency error")
        XCTAssertEqual(failure.message, "HTTP 404 for /0.jpg")
        XCTAssertEqual(end.failedAttemptCodes, [.download])
    }

    func testACancelEndsEachItemOnceWithdrawsRunningWorkAndALateConfirmationChangesNothing() throws {
        var driver = driver(slots: 1)
        let download = try XCTUnwrap(
            driver.handle(.submit(F.images(3), from: F.client, batchID: "b1")).assignments().first)
        let cancel = driver.handle(.cancel(CancelBatch(requestID: "c", batchID: "b1"), from: F.client.identity))
        XCTAssertEqual(
            cancel.sent.filter { $0.peer == F.w1 }.map(\.message),
            [.cancelTask(CancelTask(taskID: download.taskID, reason: "cancelled", taskKey: download.taskKey))],
            "the running download is cancelled on its worker, and nothing else is sent there")
        let toClient = cancel.sent.filter { $0.peer == F.client.identity }.map(\.message)
        guard case .cancelAccepted(let accepted)? = toClient.first else {
            return XCTFail("answered first: \(toClient)")
        }
        XCTAssertEqual(accepted.cancelledItems, 3)
        XCTAssertEqual(cancel.finishedItems.map(\.itemIndex), [0, 1, 2], "each item ends once")
        XCTAssertTrue(
            cancel.finishedItems.allSatisfy {
                if case .failure(let f) = $0.outcome { f.code == .cancelled } else { false }
            })
        XCTAssertEqual(cancel.batchesFinished.map(\.cancelled), [3])
        XCTAssertEqual(cancel.journaled.filter { if case .cancelled = $0 { true } else { false } }.count, 1)

        let confirmation = driver.handle(.results([.failure(download, TaskFailure(code: .cancelled))], from: F.w1))
        XCTAssertTrue(confirmation.sent.isEmpty, "\(confirmation)")
        XCTAssertTrue(confirmation.journaled.isEmpty)
        XCTAssertEqual(driver.core.dispatcher.runningTaskCount, 0, "the confirmation frees the slot")
    }

    func testCancellingSomeItemsLeavesTheOthersRunning() throws {
        var driver = driver(slots: 1)
        driver.handle(.submit(F.noops(3), from: F.client, batchID: "b1"))
        let cancel = driver.handle(
            .cancel(CancelBatch(requestID: "c", batchID: "b1", itemIndexes: [1]), from: F.client.identity))
        XCTAssertEqual(cancel.finishedItems.map(\.itemIndex), [1])
        XCTAssertTrue(cancel.batchesFinished.isEmpty)
        XCTAssertEqual(driver.core.queuedTaskCount, 1, "item 2 waits; item 0 runs")
    }

    func testATransientFailureIsRetriedAfterTheSchedulesWaitAsANewAttempt() throws {
        var driver = driver()
        let first = try XCTUnwrap(
            driver.handle(.submit(F.noops(1, retries: 2), from: F.client, batchID: "b1")).assignments().first)
        let failed = driver.handle(
            .results([.failure(first, TaskFailure(code: .download, message: "503", isTransient: true))], from: F.w1))
        XCTAssertTrue(failed.finishedItems.isEmpty, "not ended: retried")
        XCTAssertEqual(failed.timers.map(\.1), [.retry(first.taskKey)])
        guard case .attemptFailed(_, 0, let attempt)? = failed.journaled.first else { return XCTFail("\(failed)") }
        XCTAssertTrue(attempt.retried)

        let wait = try XCTUnwrap(failed.timers.first?.0)
        driver.advance(wait)
        let again = driver.handle(.timerFired(.retry(first.taskKey)))
        let second = try XCTUnwrap(again.assignments().first)
        XCTAssertGreaterThan(second.attempt, first.attempt, "a new attempt: a late result of the old one is stale")
        XCTAssertTrue(driver.handle(.timerFired(.retry(first.taskKey))).assignments().isEmpty, "a timer fires once")

        let end = driver.handle(.results([.success(second, TaskOutput(data: [], mediaType: ""))], from: F.w1))
        XCTAssertEqual(end.finishedItems.count, 1)
        XCTAssertEqual(driver.core.registry.batches["b1"]?.items[0].state, .succeeded)
    }

    func testAnAttemptLostWithItsWorkerIsRetriedOnAnotherWorker() throws {
        var driver = driver(slots: 1)
        let first = try XCTUnwrap(
            driver.handle(.submit(F.noops(1, retries: 1), from: F.client, batchID: "b1")).assignments().first)
        driver.handle(
            .workerHello(WorkerHello(workerID: "w2", slots: 1), from: MessageSender(identity: F.w2, key: nil)))
        let lost = driver.handle(.peerUnreachable(F.w1))
        guard case .attemptFailed(_, _, let attempt)? = lost.journaled.first else { return XCTFail("\(lost)") }
        XCTAssertEqual(attempt.code, .workerLost)
        XCTAssertEqual(attempt.worker, "w1")
        let wait = try XCTUnwrap(lost.timers.first?.0)
        driver.advance(wait)
        let retried = driver.handle(.timerFired(.retry(first.taskKey)))
        XCTAssertEqual(
            retried.assignments(to: F.w2).map(\.taskID), [first.taskID], "requeued, to the worker still there")
    }

    func testADeadlineCancelsTheUnfinishedItemsWithThatCause() throws {
        var driver = driver(slots: 1)
        var submit = F.noops(2)
        submit.deadlineSeconds = 5
        let first = try XCTUnwrap(driver.handle(.submit(submit, from: F.client, batchID: "b1")).assignments().first)
        driver.handle(.results([.success(first, TaskOutput(data: [], mediaType: ""))], from: F.w1))
        driver.advance(.seconds(4))
        XCTAssertTrue(driver.handle(.tick).finishedItems.isEmpty, "before the deadline")
        driver.advance(.seconds(2))
        let due = driver.handle(.tick)
        XCTAssertEqual(due.finishedItems.map(\.itemIndex), [1], "the finished item keeps its outcome")
        guard case .failure(let failure)? = due.finishedItems.first?.outcome else { return XCTFail("\(due)") }
        XCTAssertEqual(failure.code, .cancelled)
        XCTAssertTrue(failure.message.contains("deadline of 5 s"), failure.message)
        XCTAssertNotNil(due.journaled.first { $0 == .cancelled(CancelBatch(batchID: "b1")) })
    }

    func testASubmissionOverTheClientsLimitIsRefusedAndNothingIsJournaled() {
        var driver = CoreDriver(maxBatchesPerClient: 1)
        driver.handle(.submit(F.noops(1), from: F.client, batchID: "b1"))
        let refused = driver.handle(.submit(F.noops(1), from: F.client, batchID: "b2"))
        guard case .refusal(let refusal)? = refused.sent.first?.message else { return XCTFail("\(refused)") }
        XCTAssertEqual(refusal.code, .limit)
        XCTAssertTrue(refused.journaled.isEmpty)
        XCTAssertNil(driver.core.registry.batches["b2"])
        let other = driver.handle(.submit(F.noops(1), from: F.otherClient, batchID: "b3"))
        XCTAssertNotNil(other.journaled.first, "another client's limit is its own")
    }

    /// The batches whose tasks a one-slot worker runs, in order, for a large batch submitted before another
    /// client's small one.
    private func dispatchOrder(_ scheduling: SchedulingPolicy) throws -> [String] {
        var driver = CoreDriver(scheduling: scheduling)
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 1), from: MessageSender(identity: F.w1, key: nil)))
        var next = driver.handle(.submit(F.noops(5), from: F.client, batchID: "large")).assignments()
        next += driver.handle(.submit(F.noops(1), from: F.otherClient, batchID: "small")).assignments()
        var order: [String] = []
        while let task = next.first {
            order.append(task.batchID)
            next = driver.handle(.results([.success(task, TaskOutput(data: [], mediaType: ""))], from: F.w1))
                .assignments()
        }
        return order
    }

    func testFairShareServesAnotherClientsSmallBatchWithinARoundNotAfterTheLargeOne() throws {
        let fair = try dispatchOrder(.fairShare)
        XCTAssertEqual(fair.count, 6)
        XCTAssertLessThanOrEqual(fair.firstIndex(of: "small") ?? .max, 2, "\(fair)")
        XCTAssertEqual(try dispatchOrder(.fifo).last, "small", "first come, first served")
    }

    func testDownloadsFromOneHostTakeTurnsAcrossBatchesUnderTheHostsCap() throws {
        var driver = CoreDriver(maxDownloadsPerHost: 1)
        driver.handle(
            .workerHello(WorkerHello(workerID: "w1", slots: 8), from: MessageSender(identity: F.w1, key: nil)))
        let sent = driver.handle(.submit(F.images(3), from: F.client, batchID: "a")).assignments()
        XCTAssertEqual(sent.map(\.taskID), ["a/0/download"], "one download at the host at a time")
        XCTAssertTrue(driver.handle(.submit(F.images(1), from: F.otherClient, batchID: "b")).assignments().isEmpty)
        let next = driver.handle(.results([.success(sent[0], F.image)], from: F.w1)).assignments()
        XCTAssertEqual(
            next.map(\.taskID).sorted(), ["a/0/tilt-shift", "b/0/download"], "batch b's turn comes before a's next")
    }

    func testAManifestGrowsItsBatchWhileItRuns() throws {
        var driver = driver()
        let download = try XCTUnwrap(
            driver.handle(.submit(F.images(1), from: F.client, batchID: "b1")).assignments().first)
        let list = TaskOutput(
            data: Array("http://photos.test/a.jpg\nhttp://photos.test/b.jpg\n".utf8), mediaType: ManifestList.mediaType)
        let grown = driver.handle(.results([.success(download, list)], from: F.w1))
        let added = grown.sent.compactMap { outbound -> ItemsAdded? in
            guard case .itemsAdded(let added) = outbound.message else { return nil }
            return added
        }
        XCTAssertEqual(added.first?.items.map(\.source), ["http://photos.test/a.jpg", "http://photos.test/b.jpg"])
        XCTAssertEqual(grown.finishedItems.map(\.itemIndex), [0], "the manifest's own item ends")
        XCTAssertEqual(grown.assignments().map(\.taskID), ["b1/1/download", "b1/2/download"], "the added items start")
        XCTAssertTrue(grown.batchesFinished.isEmpty)
        XCTAssertNotNil(grown.journaled.first { if case .itemsAdded = $0 { true } else { false } })
    }
}
