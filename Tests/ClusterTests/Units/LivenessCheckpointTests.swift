@testable import Cluster
import Wire
import XCTest

/// When silence is judged (no sockets): at once for a coordinator that keeps up, after the messages
/// received before the tick for one that is behind, and as of the tick.
final class LivenessCheckpointTests: XCTestCase {
    private let tick = ContinuousClock.now

    func testACoordinatorThatKeepsUpChecksAtOnce() {
        var checkpoint = LivenessCheckpoint()
        XCTAssertNil(checkpoint.handledBatch())
        XCTAssertNil(checkpoint.handledBatch())
        XCTAssertEqual(checkpoint.timerFired(receivedBatches: 2, now: tick), tick)
        XCTAssertFalse(checkpoint.isBehind)
        XCTAssertEqual(checkpoint.deferredChecks, 0)
    }

    func testABehindCoordinatorChecksOnceItHandledWhatCameBeforeTheTickAndAsOfTheTick() {
        var checkpoint = LivenessCheckpoint()
        XCTAssertNil(checkpoint.handledBatch())
        // Five groups received, one handled: heartbeats may wait in the other four.
        XCTAssertNil(checkpoint.timerFired(receivedBatches: 5, now: tick))
        XCTAssertTrue(checkpoint.isBehind)
        XCTAssertNil(checkpoint.timerFired(receivedBatches: 9, now: tick + .seconds(1)), "the earlier check goes first")
        XCTAssertNil(checkpoint.handledBatch())
        XCTAssertNil(checkpoint.handledBatch())
        XCTAssertNil(checkpoint.handledBatch())
        XCTAssertEqual(checkpoint.handledBatch(), tick, "the fifth group handled: judged as of the first tick")
        XCTAssertFalse(checkpoint.isBehind)
        XCTAssertNil(checkpoint.handledBatch(), "once")
        XCTAssertEqual(checkpoint.deferredChecks, 1)
    }

    /// The whole path with a real `Dispatcher`: a worker whose heartbeats waited behind a backlog is not
    /// declared dead, one that really fell silent is.
    func testAHeartbeatWaitingBehindABacklogKeepsItsWorkerAlive() {
        var dispatcher = Dispatcher(heartbeatInterval: .seconds(1), workerTimeout: .seconds(5))
        let live = PeerIdentity(Array("live".utf8))
        let silent = PeerIdentity(Array("silent".utf8))
        _ = dispatcher.register(WorkerHello(workerID: "live", slots: 1), peer: live, now: tick)
        _ = dispatcher.register(WorkerHello(workerID: "silent", slots: 1), peer: silent, now: tick)
        var checkpoint = LivenessCheckpoint()
        // At tick + 6 s the socket has received a heartbeat of `live` (group 1) the coordinator has not
        // handled yet: judged by the clock alone, both would be dead.
        XCTAssertNil(checkpoint.timerFired(receivedBatches: 1, now: tick + .seconds(6)))
        // The coordinator handles it late, at tick + 9 s.
        _ = dispatcher.heartbeat(from: live, now: tick + .seconds(9))
        guard let instant = checkpoint.handledBatch() else { return XCTFail("the check runs once caught up") }
        let (dead, _) = dispatcher.expireWorkers(now: instant)
        XCTAssertEqual(dead, ["silent"])
        XCTAssertNotNil(dispatcher.workers[live])
    }
}
