import Operations
import XCTest

/// A thread-safe list of events, for asserting orders.
final class Recorder: Sendable {
    private let storage = LockedValue<[String]>([])
    func record(_ event: String) { storage.withLock { $0.append(event) } }
    var events: [String] { storage.withLock { $0 } }
    func index(of event: String) -> Int? { events.firstIndex(of: event) }
}

/// A thread-safe counter that also remembers its maximum.
final class Gauge: Sendable {
    private let storage = LockedValue<(current: Int, max: Int, total: Int)>((0, 0, 0))
    func enter() { storage.withLock { $0.current += 1; $0.total += 1; $0.max = Swift.max($0.max, $0.current) } }
    func leave() { storage.withLock { $0.current -= 1 } }
    var maximum: Int { storage.withLock { $0.max } }
    var total: Int { storage.withLock { $0.total } }
}

/// An actor that collects values, for handlers isolated to it.
actor ResultSink {
    var values: [String] = []
    func append(_ value: String) { values.append(value) }
}

/// Waits for the queue, failing the test (instead of hanging) after `seconds`.
func waitForQueue(_ queue: WorkQueue, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) async {
    let finished = await queue.waitUntilAllOperationsAreFinished(timeout: .milliseconds(Int(seconds * 1000)))
    XCTAssertTrue(finished, "queue \(queue.name) did not finish within \(seconds)s: \(queue)", file: file, line: line)
}

/// Waits for an operation, failing the test (instead of hanging) after `seconds`.
func waitFor(_ operation: AsyncOperation, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) async {
    let waiter = Task { await operation.waitUntilFinished() }
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !operation.isFinished && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
    waiter.cancel()
    XCTAssertTrue(operation.isFinished, "\(operation) did not finish within \(seconds)s", file: file, line: line)
}

/// Polls `condition` until it holds, failing the test after `seconds`.
func eventually(
    _ message: @autoclosure () -> String = "condition", seconds: Double = 10,
    file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool
) async {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline {
            XCTFail("\(message()) did not hold within \(seconds)s", file: file, line: line)
            return
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
}

struct TestError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { "TestError(\(message))" }
}
