import Operations
import Runtime
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
    func enter() {
        storage.withLock {
            $0.current += 1
            $0.total += 1
            $0.max = Swift.max($0.max, $0.current)
        }
    }
    func leave() { storage.withLock { $0.current -= 1 } }
    var maximum: Int { storage.withLock { $0.max } }
    var total: Int { storage.withLock { $0.total } }
}

/// An actor that collects values, for handlers isolated to it.
actor ResultSink {
    var values: [String] = []
    func append(_ value: String) { values.append(value) }
}

/// A one-shot gate: tasks wait until it is opened, whether or not they are cancelled (the way a slow
/// condition that ignores cancellation behaves).
final class Gate: Sendable {
    private let state = LockedValue<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let openNow = state.withLock { s -> Bool in
                if s.isOpen { return true }
                s.waiters.append(continuation)
                return false
            }
            if openNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.isOpen = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var waiting: Int { state.withLock { $0.waiters.count } }
}

/// Waits for the queue, failing the test (instead of hanging) after `seconds`.
func waitForQueue(_ queue: WorkQueue, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) async {
    let finished = await queue.waitUntilAllOperationsAreFinished(timeout: .milliseconds(Int(seconds * 1000)))
    XCTAssertTrue(finished, "queue \(queue.name) did not finish within \(seconds)s: \(queue)", file: file, line: line)
}

/// Waits for an operation, failing the test (instead of hanging) after `seconds`.
func waitFor(
    _ operation: AsyncOperation, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line
) async {
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

/// Asserts that `error` is a `DependencyFailedError` for `dependency`, caused by `cause`.
func assertDependencyFailed(
    _ error: (any Error)?, dependency: String, cause: TestError, file: StaticString = #filePath, line: UInt = #line
) {
    let failure = error as? DependencyFailedError
    XCTAssertEqual(failure?.dependency, dependency, "\(String(describing: error))", file: file, line: line)
    XCTAssertEqual(failure?.underlyingErrors.first as? TestError, cause, file: file, line: line)
}

struct TestError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { "TestError(\(message))" }
}
