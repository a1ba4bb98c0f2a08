@testable import Cluster
import Wire
import XCTest

/// The scheduling rules, driven directly (no sockets).
final class CoordinatorStateTests: XCTestCase {
    private let worker = PeerIdentity(Array("w1".utf8))
    private let client = PeerIdentity(Array("c1".utf8))
    private var now = ContinuousClock.now

    private func makeState() -> CoordinatorState {
        CoordinatorState(coordinatorID: "test", heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
    }

    private func assignments(_ out: [Outbound]) -> [TaskAssignment] {
        out.compactMap { if case .taskAssignment(let a) = $0.message { return a } else { return nil } }
    }

    private func submit(_ state: inout CoordinatorState, items: Int) -> (batchID: String, out: [Outbound]) {
        let out = state.handle(.submitBatch(SubmitBatch(
            requestID: "r", items: (0..<items).map { BatchItem(source: "http://x/\($0).jpg", outputName: "\($0)") })),
            from: client, now: now)
        guard case .batchAccepted(let accepted)? = out.first?.message else {
            XCTFail("expected BatchAccepted first, got \(out)")
            return ("", out)
        }
        return (accepted.batchID, out)
    }

    func testCreditLimitsWhatAWorkerIsSentAndInjectionFeedsTheTiltShift() {
        var state = makeState()
        _ = state.handle(.workerHello(WorkerHello(workerID: "w1", slots: 2)), from: worker, now: now)
        let (_, out) = submit(&state, items: 5)
        let sent = assignments(out)
        XCTAssertEqual(sent.count, 2, "a worker with 2 slots gets 2 tasks")
        XCTAssertTrue(sent.allSatisfy { $0.kind == .download })
        XCTAssertEqual(state.queuedTaskCount, 3)

        let bytes: [UInt8] = [0xFF, 0xD8, 1, 2, 3]
        let next = state.handle(.taskResult(TaskResult(
            taskID: sent[0].taskID, attempt: sent[0].attempt,
            outcome: .output(TaskOutput(data: bytes, mediaType: "image/jpeg")))), from: worker, now: now)
        let followUp = assignments(next)
        XCTAssertEqual(followUp.count, 1, "one slot freed, one task sent")
        // The tilt-shift of the finished download was queued behind the other downloads.
        XCTAssertEqual(followUp[0].kind, .download)
        XCTAssertEqual(state.queuedTaskCount, 3)
    }

    func testAFailedDownloadFailsItsItemWithTheCauseAndTheBatchGoesOn() {
        var state = makeState()
        _ = state.handle(.workerHello(WorkerHello(workerID: "w1", slots: 4)), from: worker, now: now)
        let (batchID, out) = submit(&state, items: 2)
        let sent = assignments(out)
        XCTAssertEqual(sent.count, 2)
        let failure = state.handle(.taskResult(TaskResult(
            taskID: sent[0].taskID, attempt: 1,
            outcome: .failure(TaskFailure(code: .download, message: "http://x/0.jpg: HTTP 404 Not Found")))),
            from: worker, now: now)
        let finished = failure.compactMap { if case .itemFinished(let f) = $0.message { return f } else { return nil } }
        XCTAssertEqual(finished.count, 1)
        XCTAssertEqual(finished.first?.itemIndex, 0)
        XCTAssertEqual(finished.first?.outcome, .failure(TaskFailure(code: .download, message: "http://x/0.jpg: HTTP 404 Not Found")))
        XCTAssertEqual(finished.first?.batchID, batchID)
        XCTAssertTrue(assignments(failure).isEmpty, "the failed item's tilt-shift is never sent")

        let ok = state.handle(.taskResult(TaskResult(
            taskID: sent[1].taskID, attempt: 1, outcome: .output(TaskOutput(data: [1], mediaType: "image/png")))),
            from: worker, now: now)
        let tilt = assignments(ok)
        XCTAssertEqual(tilt.count, 1)
        XCTAssertEqual(tilt[0].kind, .tiltShift)
        XCTAssertEqual(tilt[0].inputs, [InjectedInput(fromTaskID: sent[1].taskID, data: [1], mediaType: "image/png")])
        let done = state.handle(.taskResult(TaskResult(
            taskID: tilt[0].taskID, attempt: 1, outcome: .output(TaskOutput(data: [9], mediaType: "image/png")))),
            from: worker, now: now)
        let batchDone = done.compactMap { if case .batchFinished(let f) = $0.message { return f } else { return nil } }
        XCTAssertEqual(batchDone, [BatchFinished(batchID: batchID, succeeded: 1, failed: 1, cancelled: 0)])
    }

    func testADeadWorkersTasksAreRequeuedWithANewAttemptAndItsLateResultIsIgnored() {
        var state = makeState()
        _ = state.handle(.workerHello(WorkerHello(workerID: "w1", slots: 1)), from: worker, now: now)
        let (_, out) = submit(&state, items: 1)
        let first = assignments(out)
        XCTAssertEqual(first.map(\.attempt), [1])

        let later = now + .seconds(6)
        let other = PeerIdentity(Array("w2".utf8))
        _ = state.handle(.workerHello(WorkerHello(workerID: "w2", slots: 1)), from: other, now: later)
        let requeued = assignments(state.expireWorkers(now: later))
        XCTAssertEqual(requeued.count, 1)
        XCTAssertEqual(requeued.first?.taskID, first[0].taskID)
        XCTAssertEqual(requeued.first?.attempt, 2)

        let dropped = state.droppedMessages
        let late = state.handle(.taskResult(TaskResult(
            taskID: first[0].taskID, attempt: 1, outcome: .output(TaskOutput(data: [1])))), from: worker, now: later)
        XCTAssertTrue(late.isEmpty, "a late result of an old attempt changes nothing")
        XCTAssertEqual(state.droppedMessages, dropped + 1)
    }

    func testAnUnknownWorkersHeartbeatAsksItToRegisterAgain() {
        var state = makeState()
        let out = state.handle(.heartbeat(Heartbeat(workerID: "w1")), from: worker, now: now)
        XCTAssertEqual(out.first?.message, .refusal(Refusal(reason: CoordinatorState.unknownWorkerReason)))
    }
}
