import Foundation
import Messaging
import Synchronization
import XCTest

/// `PolledSocketExecutor` through a real ROUTER socket on loopback TCP, with a real DEALER peer: messages
/// in, handed to the actor on its thread between its jobs; sends from the thread and from elsewhere;
/// the timer; unroutable peers; close.
final class PolledSocketExecutorTests: XCTestCase {
    /// An actor on the executor that echoes every message back and notes what ran where.
    private actor Echo {
        nonisolated let executor: PolledSocketExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private(set) var received: [[[UInt8]]] = []
        private(set) var groups = 0
        private(set) var jobs: [Int] = []
        private(set) var ticks = 0
        private(set) var unroutable: [[UInt8]] = []
        /// Handlers and jobs found running on another thread, or overlapping one another.
        private(set) var violations: [String] = []
        private var running = false
        /// Whether received messages are sent back.
        var echoes = true

        init() throws {
            executor = try PolledSocketExecutor(name: "echo-test")
        }

        func open(context: MessagingContext, bind endpoint: String = "tcp://127.0.0.1:*") throws -> String? {
            try executor.openSocket(
                context: context, kind: .router, bind: [endpoint], appendsPeerKey: true,
                onMessages: { [weak self] messages in self?.assumeIsolated { $0.handle(messages) } },
                onUnroutable: { [weak self] identity in self?.assumeIsolated { $0.noteUnroutable(identity) } })
        }

        /// Runs `body` as one exclusive step on the executor's thread, or notes why not.
        private func exclusively(_ what: String, _ body: () -> Void) {
            if !executor.isCurrentThread { violations.append("\(what) off the executor's thread") }
            if running { violations.append("\(what) overlapped another step") }
            running = true
            body()
            running = false
        }

        private func handle(_ messages: [[[UInt8]]]) {
            exclusively("a group of messages") {
                groups += 1
                received += messages
                // Identity and payload back; the last frame is the (empty, no CurveZMQ) peer key.
                if echoes { executor.send(contentsOf: messages.map { Array($0.dropLast()) }) }
            }
        }

        private func noteUnroutable(_ identity: [UInt8]) {
            exclusively("an unroutable report") { unroutable.append(identity) }
        }

        func job(_ number: Int) {
            exclusively("job \(number)") { jobs.append(number) }
        }

        func startTicking() {
            executor.startTimer(every: .milliseconds(20)) { [weak self] in
                self?.assumeIsolated { echo in echo.exclusively("a tick") { echo.ticks += 1 } }
            }
        }

        func stopTicking() { executor.stopTimer() }

        /// Calls run by `schedule(after:)`, by the number each was given.
        private(set) var calls: [Int] = []

        /// Schedules a call for each of `delays` (in milliseconds), noting its index when it runs.
        func schedule(delays: [Int]) {
            for (index, delay) in delays.enumerated() {
                executor.schedule(after: .milliseconds(delay)) { [weak self] in
                    self?.assumeIsolated { echo in echo.exclusively("a scheduled call") { echo.calls.append(index) } }
                }
            }
        }

        func cancelScheduledCalls() { executor.cancelScheduledCalls() }

        func stopEchoing() { echoes = false }

        /// Sends on the thread (from a job) to a peer that is not connected.
        func sendToNobody() { executor.send([Array("nobody".utf8), [1]]) }

        func closeSocket() -> Bool {
            executor.closeSocket()
            return executor.isSocketOpen
        }
    }

    private func number(_ value: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(value).littleEndian, Array.init)
    }

    /// Waits (up to a generous limit, against a hang, not a timing claim) until `condition` holds.
    private func eventually(_ what: String, _ condition: () async -> Bool) async throws {
        let limit = ContinuousClock.now + .seconds(60)
        while !(await condition()) {
            if ContinuousClock.now > limit { return XCTFail("still not: \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func testScheduledCallsRunOnTheThreadInTheOrderTheyAreDueAndCancelledOnesNever() async throws {
        let echo = try Echo()
        await echo.schedule(delays: [60, 5, 30, 0, 30])
        try await eventually("five calls ran") { await echo.calls.count == 5 }
        let calls = await echo.calls
        XCTAssertEqual(calls, [3, 1, 2, 4, 0], "due first runs first; equal instants in the order scheduled")
        await echo.schedule(delays: [40, 40])
        await echo.cancelScheduledCalls()
        await echo.schedule(delays: [0, 80])  // indexes 0 and 1 again: only these two may run
        // The last of them is due after the cancelled ones were: had they not been dropped, they ran before it.
        try await eventually("the two calls scheduled after the cancel ran") { await echo.calls.count == 7 }
        let late = await echo.calls
        let violations = await echo.violations
        XCTAssertEqual(Array(late.dropFirst(5)), [0, 1], "cancelled calls never run")
        XCTAssertEqual(violations, [])
    }

    func testMessagesInJobsBetweenThemSendsFromTheThreadAndFromElsewhereThenClose() async throws {
        let context = try MessagingContext()
        let echo = try Echo()
        let bound = try await echo.open(context: context)
        let endpoint = try XCTUnwrap(bound)
        XCTAssertTrue(endpoint.hasPrefix("tcp://127.0.0.1:") && !endpoint.hasSuffix(":*"), endpoint)
        var options = SocketOptions()
        options.identity = Array("dealer-1".utf8)
        let dealer = try await SocketChannel.open(
            context: context, kind: .dealer, options: options, connect: [endpoint], name: "dealer")
        var replies = dealer.messages.makeAsyncIterator()

        // Messages in while jobs are enqueued from other tasks: all handled, in order, one step at a time.
        let count = 2_000
        let jobs = Task.detached {
            for index in 0..<count { await echo.job(index) }
        }
        dealer.send(contentsOf: (0..<count).map { [number($0)] })
        for index in 0..<count {
            let reply = await replies.next()
            XCTAssertEqual(reply, [number(index)], "echoed from the thread, in order")
        }
        await jobs.value
        let received = await echo.received
        XCTAssertEqual(
            received.map { $0 }, (0..<count).map { [Array("dealer-1".utf8), number($0), []] },
            "identity, payload, and an empty key frame (no CurveZMQ)")
        let groups = await echo.groups
        XCTAssertGreaterThan(groups, 0)
        XCTAssertLessThanOrEqual(groups, count)
        let ranJobs = await echo.jobs
        XCTAssertEqual(ranJobs, Array(0..<count), "jobs in the order they were enqueued")

        // A send from another thread is posted to the executor's thread.
        XCTAssertFalse(echo.executor.isCurrentThread)
        echo.executor.send([Array("dealer-1".utf8), Array("from elsewhere".utf8)])
        let posted = await replies.next()
        XCTAssertEqual(posted, [Array("from elsewhere".utf8)])

        // The timer fires on the thread, between jobs.
        await echo.startTicking()
        try await eventually("three ticks") { await echo.ticks >= 3 }
        await echo.stopTicking()

        // A message to a peer that is gone is dropped, counted and reported after the send.
        let droppedBefore = echo.executor.droppedMessages
        await echo.sendToNobody()
        try await eventually("the unroutable report") { await echo.unroutable == [Array("nobody".utf8)] }
        XCTAssertEqual(echo.executor.droppedMessages, droppedBefore + 1)

        let violations = await echo.violations
        XCTAssertEqual(violations, [])

        // Close from the thread: later sends are dropped and counted, and the context can end.
        let stillOpen = await echo.closeSocket()
        XCTAssertFalse(stillOpen)
        let droppedAtClose = echo.executor.droppedMessages
        echo.executor.send([Array("dealer-1".utf8), [9]])
        XCTAssertEqual(echo.executor.droppedMessages, droppedAtClose + 1)
        await echo.executor.close()  // idempotent, from elsewhere
        await echo.job(count)  // the thread still runs jobs
        let lastJob = await echo.jobs.last
        XCTAssertEqual(lastJob, count)
        await dealer.close()
        await context.terminate()  // returns only once every socket of the context is closed
    }

    func testCloseFromAnotherThreadAndMessagesThatWaitedUnread() async throws {
        let context = try MessagingContext()
        let echo = try Echo()
        await echo.stopEchoing()
        let bound = try await echo.open(context: context)
        let endpoint = try XCTUnwrap(bound)
        let dealer = try await SocketChannel.open(context: context, kind: .dealer, connect: [endpoint], name: "dealer")
        // More than one group's worth: handed over in several groups, none lost.
        let count = 10_000
        dealer.send(contentsOf: (0..<count).map { [number($0)] })
        try await eventually("every message handled") { await echo.received.count == count }
        let payloads = await echo.received.map { $0[1] }
        XCTAssertEqual(payloads, (0..<count).map(number), "in order")
        let groups = await echo.groups
        XCTAssertGreaterThanOrEqual(groups, 3, "at most 4,096 messages a group")

        await echo.executor.close()
        let droppedAtClose = echo.executor.droppedMessages
        echo.executor.send([[1], [2]])
        XCTAssertEqual(echo.executor.droppedMessages, droppedAtClose + 1, "sent after close: dropped")
        let violations = await echo.violations
        XCTAssertEqual(violations, [])
        await dealer.close()
        await context.terminate()
    }

    func testAnActorReleasedWithItsSocketOpenClosesIt() async throws {
        let context = try MessagingContext()
        var echo: Echo? = try Echo()
        _ = try await echo?.open(context: context)
        await echo?.job(1)
        echo = nil
        // The executor's thread closes the socket as it ends: otherwise this would never return.
        await context.terminate()
    }

    func testBindingAnEndpointInUseFailsWithAClearErrorAndTheThreadServesOn() async throws {
        let context = try MessagingContext()
        let first = try Echo()
        let bound = try await first.open(context: context)
        let endpoint = try XCTUnwrap(bound)
        let second = try Echo()
        do {
            _ = try await second.open(context: context, bind: endpoint)
            XCTFail("a second bind of \(endpoint) must fail")
        } catch let error as ZeroMQError {
            XCTAssertTrue("\(error)".contains(endpoint), "\(error)")
        }
        await second.job(7)
        let jobs = await second.jobs
        XCTAssertEqual(jobs, [7])
        await first.executor.close()
        await context.terminate()
    }
}
