import Dispatch
import Foundation
import Runtime
import XCTest

/// `ComputeThreads`: CPU-bound work on threads of its own, cancellable while it runs and while it waits.
final class ComputeThreadsTests: XCTestCase {
    /// A job's captures (in a worker: a photo's downloaded bytes, its encoded output) go when it is done,
    /// not dozens of jobs later when the queue compacts.
    func testAFinishedJobLetsGoOfWhatItCaptured() async throws {
        let threads = ComputeThreads(name: "test release", count: 1)
        defer { threads.shutdown() }
        final class Photo: Sendable {}
        weak var captured: Photo?
        do {
            let photo = Photo()
            captured = photo
            let result = try await threads.run { _ in withExtendedLifetime(photo) { 1 } }
            XCTAssertEqual(result, 1)
        }
        // A second job: by its end the thread has moved on from the first.
        _ = try await threads.run { _ in 2 }
        XCTAssertNil(captured, "the first job's captures are let go")
    }

    private static func threadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
            ?? ""
    }

    func testWorkHandsItsResultToTheNextPoolsThread() async throws {
        let compute = ComputeThreads(name: "test first", count: 1)
        let sink = ComputeThreads(name: "test second", count: 1)
        defer {
            compute.shutdown()
            sink.shutdown()
        }
        let (firstName, secondName, sum) = try await compute.run(
            { _ in (Self.threadName(), (1...100).reduce(0, +)) },
            then: sink
        ) { first, _ in
            (first.0, Self.threadName(), first.1 * 2)
        }
        XCTAssertEqual(firstName, "test first")
        XCTAssertEqual(secondName, "test second")
        XCTAssertEqual(sum, 10_100)
    }

    func testTheNextWorkNeverStartsAfterAFailureOrACancel() async throws {
        let compute = ComputeThreads(name: "test first", count: 1)
        let sink = ComputeThreads(name: "test second", count: 1)
        defer {
            compute.shutdown()
            sink.shutdown()
        }
        let nextRan = LockedValue(false)
        struct Broken: Error {}
        do {
            _ = try await compute.run({ _ -> Int in throw Broken() }, then: sink) { _, _ in
                nextRan.withLock { $0 = true }
            }
            XCTFail("expected the first work's error")
        } catch is Broken {}

        let started = DispatchSemaphore(value: 0)
        let work = Task {
            try await compute.run(
                { cancellation -> Int in
                    started.signal()
                    while !cancellation.isRaised { usleep(100) }
                    return 1  // finishes anyway: the next work must not start on a raised flag
                }, then: sink
            ) { _, _ in nextRan.withLock { $0 = true } }
        }
        await Self.wait(started)
        await Self.cancelExpectingCancellation(work)
        XCTAssertFalse(nextRan.withLock { $0 }, "the second pool ran nothing")
    }

    func testWorkRunsOnThePoolsOwnThreadsAndReturnsItsResult() async throws {
        let threads = ComputeThreads(name: "test compute", count: 2)
        defer { threads.shutdown() }
        let name = try await threads.run { _ in
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
                ?? ""
        }
        XCTAssertTrue(name.hasPrefix("test compute"), "ran on '\(name)'")
        let sum = try await threads.run { _ in (1...1000).reduce(0, +) }
        XCTAssertEqual(sum, 500_500)
    }

    func testTheCooperativePoolStaysFreeWhileEveryThreadIsBusy() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount
        let threads = ComputeThreads(name: "test busy", count: count)
        defer { threads.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let blocked = (0..<count).map { _ in
            Task {
                try await threads.run { _ in
                    started.signal()
                    release.wait()
                }
            }
        }
        for _ in 0..<count { await Self.wait(started) }
        // Every thread of the pool is blocked; as many tasks as cores still run at once on Swift's pool.
        let answers = await withTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { index } }
            return await group.reduce(0, +)
        }
        XCTAssertEqual(answers, (0..<count).reduce(0, +))
        for _ in 0..<count { release.signal() }
        for task in blocked { try await task.value }
    }

    func testCancellingTheAwaitingTaskRaisesTheFlagOfRunningWork() async throws {
        let threads = ComputeThreads(name: "test cancel", count: 1)
        defer { threads.shutdown() }
        let started = DispatchSemaphore(value: 0)
        let work = Task {
            try await threads.run { cancellation -> Int in
                started.signal()
                var spins = 0
                while !cancellation.isRaised { spins += 1 }
                throw CancellationError()
            }
        }
        await Self.wait(started)
        await Self.cancelExpectingCancellation(work)
    }

    /// Cancels `work` and checks that it ends with `CancellationError`.
    private static func cancelExpectingCancellation<Value: Sendable>(
        _ work: Task<Value, any Error>, file: StaticString = #filePath, line: UInt = #line
    ) async {
        work.cancel()
        do {
            _ = try await work.value
            XCTFail("expected the work to stop", file: file, line: line)
        } catch is CancellationError {
        } catch {
            XCTFail("expected CancellationError, got \(error)", file: file, line: line)
        }
    }

    func testWorkWaitingForAThreadIsWithdrawnAtOnceWhenCancelled() async throws {
        let threads = ComputeThreads(name: "test queue", count: 1)
        defer { threads.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let occupying = Task {
            try await threads.run { _ in
                started.signal()
                release.wait()
            }
        }
        await Self.wait(started)
        let ran = LockedValue(false)
        let waiting = Task { try await threads.run { _ in ran.withLock { $0 = true } } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        // Withdrawn while the only thread is still blocked: it ends without ever running.
        do {
            try await waiting.value
            XCTFail("expected CancellationError")
        } catch is CancellationError {}
        release.signal()
        try await occupying.value
        XCTAssertFalse(ran.withLock { $0 })
    }

    func testWorkStartsInTheOrderItWasGiven() async throws {
        let threads = ComputeThreads(name: "test order", count: 1)
        defer { threads.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let order = LockedValue<[Int]>([])
        let first = Task {
            try await threads.run { _ in
                started.signal()
                release.wait()
            }
        }
        await Self.wait(started)
        var later: [Task<Void, any Error>] = []
        for index in 0..<5 {
            later.append(Task { try await threads.run { _ in order.withLock { $0.append(index) } } })
            try await Task.sleep(for: .milliseconds(10))  // each is queued before the next is given
        }
        release.signal()
        try await first.value
        for task in later { try await task.value }
        XCTAssertEqual(order.withLock { $0 }, [0, 1, 2, 3, 4])
    }

    func testAfterShutdownWorkIsRefusedWithAReason() async throws {
        let threads = ComputeThreads(name: "test shutdown", count: 1)
        threads.shutdown()
        do {
            _ = try await threads.run { _ in 1 }
            XCTFail("expected a refusal")
        } catch let error as ComputeThreadsError {
            XCTAssertTrue(error.description.contains("shut down"), error.description)
        }
    }

    /// Waits for `semaphore` without blocking a thread of Swift's pool.
    private static func wait(_ semaphore: DispatchSemaphore) async {
        while semaphore.wait(timeout: .now()) != .success {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
