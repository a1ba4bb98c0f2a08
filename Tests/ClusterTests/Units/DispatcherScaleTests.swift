import Wire
import XCTest

@testable import Cluster

/// The dispatcher with many workers, and with a worker registered again while messages cross (no
/// sockets): the free-slot index in use, and the misfires seen with 1,000 simulated workers.
final class DispatcherScaleTests: XCTestCase {
    private let now = ContinuousClock.now

    private func peer(_ number: Int) -> PeerIdentity { PeerIdentity(Array("w\(number)".utf8)) }

    private func assignments(_ out: [Outbound]) -> [TaskAssignment] {
        out.compactMap { if case .taskAssignment(let a) = $0.message { return a } else { return nil } }
    }

    private func noop(_ key: TaskKey) -> TaskAssignment {
        TaskAssignment(taskID: "t\(key)", batchID: "b", attempt: 1, kind: .noop, taskKey: key)
    }

    /// Every slot of 1,000 workers filled, then each result's slot refilled on the worker that answered,
    /// and the index always agreeing with the records.
    func testAFreedSlotIsRefilledOnTheWorkerThatAnsweredAmongAThousand() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        for number in 0..<1_000 {
            _ = dispatcher.register(
                WorkerHello(workerID: "w\(number)", slots: 4, acceptsBatches: true), peer: peer(number), now: now)
        }
        var sent: [TaskAssignment] = []
        var holders: [TaskKey: PeerIdentity] = [:]
        for key in TaskKey(1)...4_100 {
            let out = dispatcher.enqueue(noop(key))
            for message in out {
                if case .taskAssignment(let a) = message.message { holders[a.taskKey] = message.peer }
            }
            sent += assignments(out)
        }
        XCTAssertEqual(sent.count, 4_000, "4 slots on each of 1,000 workers")
        XCTAssertTrue(dispatcher.workers.values.allSatisfy { $0.running.count == 4 })
        XCTAssertTrue(dispatcher.freeSlotIndex.isEmpty)
        XCTAssertEqual(dispatcher.queuedTaskCount, 100)

        for key in TaskKey(1)...100 {
            guard let holder = holders[key] else { return XCTFail("task \(key) was sent") }
            let (delivered, out) = dispatcher.complete(
                TaskResult(taskID: "t\(key)", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: key),
                from: holder, now: now)
            XCTAssertNotNil(delivered)
            XCTAssertEqual(out.map(\.peer), [holder], "the only free slot is the one just freed")
            XCTAssertEqual(assignments(out).map(\.taskKey), [4_000 + key])
        }
        XCTAssertEqual(dispatcher.queuedTaskCount, 0)
        for worker in dispatcher.workers.values {
            XCTAssertEqual(dispatcher.freeSlotIndex.freeSlots(of: worker.peer), worker.freeSlots, "the index agrees")
        }
    }

    /// A burst goes to the workers with the most free slots first; a drained or departed worker gets nothing.
    func testTheMostFreeSlotsFirstAndNothingForDrainingOrDepartedWorkers() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        _ = dispatcher.register(WorkerHello(workerID: "big", slots: 6, acceptsBatches: true), peer: peer(1), now: now)
        _ = dispatcher.register(WorkerHello(workerID: "small", slots: 2, acceptsBatches: true), peer: peer(2), now: now)
        let first = dispatcher.enqueue(noop(1)) + dispatcher.enqueue(noop(2)) + dispatcher.enqueue(noop(3))
        XCTAssertEqual(first.map(\.peer), [peer(1), peer(1), peer(1)], "6, 5 and 4 free against 2")
        _ = dispatcher.workerLeft(peer(1), draining: true)
        XCTAssertEqual(dispatcher.freeSlotIndex.freeSlots(of: peer(1)), 0, "draining: no free slots")
        XCTAssertEqual(dispatcher.enqueue(noop(4)).map(\.peer), [peer(2)])
        _ = dispatcher.workerLeft(peer(2), draining: false)
        XCTAssertTrue(dispatcher.freeSlotIndex.isEmpty)
        XCTAssertTrue(dispatcher.enqueue(noop(5)).isEmpty, "nobody to send it to")
        _ = dispatcher.register(WorkerHello(workerID: "small", slots: 2, acceptsBatches: true), peer: peer(2), now: now)
        XCTAssertEqual(
            dispatcher.freeSlotIndex.freeSlots(of: peer(2)), 0,
            "registered again: its requeued task and the waiting one")
        XCTAssertEqual(dispatcher.queuedTaskCount, 0)
    }

    /// A worker declared dead registers again while its old heartbeat is still on the way: that heartbeat
    /// reports the previous registration's sequences, and must not make the new assignments look lost.
    func testAHeartbeatThatCrossedTheWelcomeLosesNothing() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        let worker = peer(1)
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: now)
        let first = assignments(dispatcher.enqueue(noop(1)) + dispatcher.enqueue(noop(2)))
        XCTAssertEqual(first.map(\.sequence), [1, 2])

        // Declared dead (its heartbeats were late): its attempts are lost, and the operations retry them as
        // attempt 2 (as `ItemRun` does); it registers again at once.
        let later = now + .seconds(6)
        XCTAssertEqual(dispatcher.expireWorkers(now: later).dead, ["w1"])
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.result.taskKey).sorted(), [1, 2])
        _ = dispatcher.register(WorkerHello(workerID: "w1", slots: 2, acceptsBatches: true), peer: worker, now: later)
        var retries = [noop(1), noop(2)]
        for index in retries.indices { retries[index].attempt = 2 }
        let again = assignments(retries.flatMap { dispatcher.enqueue($0) })
        XCTAssertEqual(Set(again.map(\.taskKey)), [1, 2])
        XCTAssertEqual(again.map(\.sequence).sorted(), [3, 4], "above every sequence of the previous registration")

        // The heartbeat it sent before it heard the Welcome: the old sequence, the old tasks.
        for _ in 0..<Dispatcher.heartbeatsBeforeLost {
            let (lost, out) = dispatcher.heartbeat(
                Heartbeat(workerID: "w1", lastSequence: 2, holding: [1, 2]),
                from: worker, now: later)
            XCTAssertTrue(lost == 0 && out.isEmpty, "nothing lost, nothing sent again")
        }
        XCTAssertEqual(dispatcher.lostDeliveries, 0)
        XCTAssertGreaterThan(dispatcher.crossedHeartbeats, 0)
        XCTAssertEqual(dispatcher.state(of: 1), .running(worker: worker))

        // After the Welcome the worker counts from 0 again and reports the new sequences.
        let (lost, out) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 4, holding: [1, 2]), from: worker, now: later)
        XCTAssertTrue(lost == 0 && out.isEmpty)
        let (result, _) = dispatcher.complete(
            TaskResult(taskID: "t1", attempt: 2, outcome: .output(TaskOutput(data: [])), taskKey: 1), from: worker,
            now: later)
        XCTAssertNotNil(result, "the new attempt's result is taken")

        // A real loss is still found: sequence 4 acknowledged, task 2 neither held nor answered, at two
        // heartbeats in a row (the first could be ahead of its result).
        let (notYet, _) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 4, holding: []), from: worker, now: later)
        XCTAssertEqual(notYet, 0)
        let (lostNow, _) = dispatcher.heartbeat(
            Heartbeat(workerID: "w1", lastSequence: 4, holding: []), from: worker, now: later)
        XCTAssertEqual(lostNow, 1)
        XCTAssertEqual(dispatcher.takeWorkerLosses().map(\.result.taskKey), [2])
        XCTAssertEqual(dispatcher.lostDeliveries, 1)
    }
}
