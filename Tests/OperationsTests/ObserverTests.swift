import Operations
import XCTest

/// Observers and completion handlers: what runs when, and where.
final class ObserverTests: XCTestCase {
    func testObserversAndCompletionHandlers() async throws {
        let recorder = Recorder()
        let operation = AsyncBlockOperation(name: "observed") { recorder.record("execute") }
        operation.addObserver(
            BlockObserver(
                willExecute: { _ in recorder.record("willExecute") },
                didFinish: { _, state, _ in recorder.record("didFinish \(state)") }
            ))
        operation.onCompletion { _ in recorder.record("completion") }
        let sink = ResultSink()
        let isolated = expectation(description: "actor-isolated completion")
        operation.onCompletion(isolatedTo: sink) { sink, operation in
            sink.assertIsolated()
            sink.append(operation.name)
            isolated.fulfill()
        }
        let queue = WorkQueue()
        try queue.addOperation(operation)
        await waitForQueue(queue)
        await fulfillment(of: [isolated], timeout: 10)
        XCTAssertEqual(recorder.events, ["willExecute", "execute", "didFinish finished", "completion"])
        let values = await sink.values
        XCTAssertEqual(values, ["observed"])

        let cancelled = AsyncOperation(name: "c")
        cancelled.addObserver(BlockObserver(didCancel: { _, errors in recorder.record("didCancel \(errors.count)") }))
        cancelled.cancel(error: TestError("x"))
        cancelled.cancel(error: TestError("y"))
        XCTAssertEqual(recorder.events.last, "didCancel 1")
        XCTAssertEqual(cancelled.errors.first as? TestError, TestError("x"))
    }
}
