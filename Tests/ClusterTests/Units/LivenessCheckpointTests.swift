import Wire
import XCTest

@testable import Cluster

/// When silence is judged (no sockets): at once for a coordinator that keeps up, after the messages
/// received before the tick for one that is behind, and as of the tick.
final class LivenessCheckpointTests: XCTestCase {
    private let tick = ContinuousClock.now

    func testACoordinatorThatKeepsUpChecksAtOnce() {
        var checkpoint = LivenessCheckpoint()
        XCTAssertNil(checkpoint.handledMessages(caughtUp: true), "no check waits")
        XCTAssertEqual(checkpoint.timerFired(caughtUp: true, now: tick), tick)
        XCTAssertFalse(checkpoint.isBehind)
        XCTAssertEqual(checkpoint.deferredChecks, 0)
    }

    func testABehindCoordinatorChecksOnceItHandledWhatCameBeforeTheTickAndAsOfTheTick() {
        var checkpoint = LivenessCheckpoint()
        // Messages wait unread at the tick: heartbeats may be among them.
        XCTAssertNil(checkpoint.timerFired(caughtUp: false, now: tick))
        XCTAssertTrue(checkpoint.isBehind)
        XCTAssertNil(checkpoint.timerFired(caughtUp: true, now: tick + .seconds(1)), "the earlier check goes first")
        XCTAssertNil(checkpoint.handledMessages(caughtUp: false), "a group handled, more still unread")
        XCTAssertNil(checkpoint.handledMessages(caughtUp: false))
        XCTAssertEqual(
            checkpoint.handledMessages(caughtUp: true), tick, "none left unread: judged as of the first tick")
        XCTAssertFalse(checkpoint.isBehind)
        XCTAssertNil(checkpoint.handledMessages(caughtUp: true), "once")
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
        // At tick + 6 s a heartbeat of `live` waits unread on the socket: judged by the clock alone, both
        // would be dead.
        XCTAssertNil(checkpoint.timerFired(caughtUp: false, now: tick + .seconds(6)))
        // The coordinator handles it late, at tick + 9 s, and nothing is left unread.
        _ = dispatcher.heartbeat(from: live, now: tick + .seconds(9))
        guard let instant = checkpoint.handledMessages(caughtUp: true) else {
            return XCTFail("the check runs once caught up")
        }
        let (dead, _) = dispatcher.expireWorkers(now: instant)
        XCTAssertEqual(dead, ["silent"])
        XCTAssertNotNil(dispatcher.workers[live])
    }
}
