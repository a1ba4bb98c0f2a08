import XCTest

@testable import Cluster

/// A worker's slots and compute threads: the slots default to twice the compute threads, which never
/// exceed the slots (a compute thread without a slot to feed it would never run).
final class WorkerConfigurationTests: XCTestCase {
    func testSlotsDefaultToTwiceTheComputeThreads() {
        let configuration = WorkerConfiguration(coordinator: "inproc://x", computeThreads: 3)
        XCTAssertEqual(configuration.computeThreads, 3)
        XCTAssertEqual(configuration.slots, 6)
        XCTAssertEqual(WorkerConfiguration.defaultSlots(computeThreads: 0), 2, "at least one compute thread")
    }

    func testComputeThreadsNeverExceedTheSlots() {
        let configuration = WorkerConfiguration(coordinator: "inproc://x", slots: 1, computeThreads: 4)
        XCTAssertEqual(configuration.slots, 1)
        XCTAssertEqual(configuration.computeThreads, 1)
    }

    func testExplicitSlotsKeepTheComputeThreadsAndNothingGoesBelowOne() {
        let configuration = WorkerConfiguration(coordinator: "inproc://x", slots: 5, computeThreads: 2)
        XCTAssertEqual(configuration.slots, 5)
        XCTAssertEqual(configuration.computeThreads, 2)
        let clamped = WorkerConfiguration(coordinator: "inproc://x", slots: 0, computeThreads: 0)
        XCTAssertEqual(clamped.slots, 1)
        XCTAssertEqual(clamped.computeThreads, 1)
    }

    func testAWorkerAnnouncesItsComputeThreadsForGivingBackUnlessTurnedOff() {
        var configuration = WorkerConfiguration(coordinator: "inproc://x", slots: 8, computeThreads: 3)
        XCTAssertEqual(configuration.giveBack, .on, "on by default")
        XCTAssertEqual(configuration.giveBackThreads, 3)
        configuration.giveBack = .off
        XCTAssertEqual(configuration.giveBackThreads, 0, "off: announced as an older worker, never asked")
    }
}
