import Operations
import XCTest

/// Remote operations: `CompletableOperation` completed, failed or cancelled by an external event.
final class RemoteOperationTests: XCTestCase {
    func testRemoteOperationCompletedByAnExternalEvent() async throws {
        let network = ResultSink()
        let remote = CompletableOperation<[UInt8]>(name: "download on worker") { operation in
            await network.append("sent task \(operation.id)")
        }
        let queue = WorkQueue()
        try queue.addOperation(remote)
        await eventually("request sent") { remote.isExecuting }
        // The "result message" arrives on some other task.
        Task.detached { remote.complete(with: [0xFF, 0xD8]) }
        await waitForQueue(queue)
        XCTAssertEqual(remote.state, .finished)
        XCTAssertEqual(remote.output, [0xFF, 0xD8])
        let sent = await network.values
        XCTAssertEqual(sent, ["sent task \(remote.id)"])

        let failing = CompletableOperation<[UInt8]>(name: "failing on worker")
        try queue.addOperation(failing)
        failing.fail(with: TestError("worker crashed"))
        await waitForQueue(queue)
        XCTAssertEqual(failing.state, .failed)
        XCTAssertEqual(failing.errors.first as? TestError, TestError("worker crashed"))

        let cancelMessages = Gauge()
        let cancelled = CompletableOperation<[UInt8]>(
            name: "cancelled on worker", onCancel: { _ in cancelMessages.enter() })
        try queue.addOperation(cancelled)
        await eventually { cancelled.isExecuting }
        cancelled.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(cancelled.state, .cancelled)
        XCTAssertEqual(cancelMessages.total, 1, "onCancel sends the cancel message to the worker")
    }
}
