import Dispatch
import Foundation
import Operations
import XCTest

/// `ThreadExecutor`: an actor whose jobs run on a thread of its own, in order, never on the cooperative pool.
final class ThreadExecutorTests: XCTestCase {
    private actor Recorder {
        private let executor = ThreadExecutor(name: "test actor")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private(set) var values: [Int] = []

        func record(_ value: Int) { values.append(value) }

        func threadName() -> String {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines) ?? ""
        }

        /// Blocks the actor's thread (as a journal sync would) until `release` is signalled.
        func block(started: DispatchSemaphore, release: DispatchSemaphore) {
            started.signal()
            release.wait()
        }
    }

    func testTheActorRunsOnItsOwnThread() async {
        let recorder = Recorder()
        let name = await recorder.threadName()
        XCTAssertEqual(name, "test actor")
    }

    func testJobsFromOneTaskRunInOrder() async {
        let recorder = Recorder()
        for value in 0..<1_000 { await recorder.record(value) }
        let values = await recorder.values
        XCTAssertEqual(values, Array(0..<1_000))
    }

    func testManyConcurrentCallersAreAllServed() async {
        let recorder = Recorder()
        await withTaskGroup(of: Void.self) { group in
            for value in 0..<2_000 { group.addTask { await recorder.record(value) } }
        }
        let values = await recorder.values
        XCTAssertEqual(values.sorted(), Array(0..<2_000))
    }

    func testABlockedActorLeavesTheCooperativePoolFree() async {
        let count = ProcessInfo.processInfo.activeProcessorCount
        let recorders = (0..<count).map { _ in Recorder() }
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let blocked = recorders.map { recorder in
            Task { await recorder.block(started: started, release: release) }
        }
        for _ in 0..<count { await Self.wait(started) }
        // As many actors as cores are blocked on their threads; the pool still runs as many tasks as cores.
        let answers = await withTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { index } }
            return await group.reduce(0, +)
        }
        XCTAssertEqual(answers, (0..<count).reduce(0, +))
        for _ in 0..<count { release.signal() }
        for task in blocked { await task.value }
    }

    /// Waits for `semaphore` without holding a thread of the cooperative pool.
    private static func wait(_ semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }
}
