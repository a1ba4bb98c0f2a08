import Fetching
import Foundation
import Imaging
import Logging
import Operations
import Runtime
import Wire
import XCTest

@testable import Cluster

/// `AssignedTask`: an assignment becomes an operation of its kind (`TaskOperation`), and the finished
/// operation the result the coordinator expects, read with the operation's own type. Real operations on a
/// real queue; no socket.
final class AssignedTaskTests: XCTestCase {
    private let fetcher = ImageFetcher(configuration: FetchConfiguration(allowLocalFiles: true))
    private let threads = ComputeThreads(name: "test", count: 1)

    override func tearDown() async throws {
        await fetcher.shutdown()
        threads.shutdown()
    }

    private func assigned(_ assignment: TaskAssignment) throws(TaskRejection) -> AssignedTask {
        try AssignedTask(
            assignment, fetcher: fetcher, filterThreads: 1, limits: .default, computeThreads: threads,
            sinkThreads: threads, log: TaskLogger(Logger(label: "test"), assignment: assignment))
    }

    private func run(_ task: AssignedTask) async throws -> TaskResult {
        let queue = WorkQueue(name: "test", maxConcurrentOperationCount: 1)
        try queue.addOperation(task.operation)
        await task.operation.waitUntilFinished()
        return task.result
    }

    func testANoOpSucceedsWithNothing() async throws {
        let task = try assigned(TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .noop, taskKey: 7))
        guard case .noop = task.work else { return XCTFail("a no-op runs a NoOpOperation") }
        let result = try await run(task)
        XCTAssertEqual(result, TaskResult(taskID: "t", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: 7))
    }

    func testADownloadReturnsTheBytesWithTheirMediaType() async throws {
        let bytes = try SyntheticImages.make(width: 8, height: 8, format: .png, seed: 1)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("assigned-\(UUID().uuidString).png")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let task = try assigned(
            TaskAssignment(taskID: "d", batchID: "b", attempt: 1, kind: .download, source: file.path))
        guard case .download = task.work else { return XCTFail("a download runs a FetchOperation") }
        let result = try await run(task)
        XCTAssertEqual(result.outcome, .output(TaskOutput(data: bytes, mediaType: "image/png")))
    }

    func testADownloadOfAMissingFileFailsAsADownload() async throws {
        let task = try assigned(
            TaskAssignment(
                taskID: "d", batchID: "b", attempt: 1, kind: .download,
                source: "/nonexistent/\(UUID().uuidString).png"))
        let result = try await run(task)
        guard case .failure(let failure) = result.outcome else { return XCTFail("\(result.outcome)") }
        XCTAssertEqual(failure.code, .download, failure.message)
    }

    func testACancelledTaskFailsAsCancelled() async throws {
        let task = try assigned(TaskAssignment(taskID: "t", batchID: "b", attempt: 2, kind: .noop))
        task.operation.cancel()
        let result = try await run(task)
        guard case .failure(let failure) = result.outcome else { return XCTFail("\(result.outcome)") }
        XCTAssertEqual(failure.code, .cancelled)
    }

    func testATiltShiftOfBytesThatAreNoImageIsRejectedBeforeItRuns() {
        let assignment = TaskAssignment(
            taskID: "s", batchID: "b", attempt: 1, kind: .tiltShift, source: "x.jpg",
            inputs: [InjectedInput(fromTaskID: "d", data: Array("not an image".utf8))])
        do {
            _ = try assigned(assignment)
            XCTFail("bytes that are no image are refused")
        } catch {
            XCTAssertEqual(error.failure.code, .decode)
            XCTAssertTrue(error.failure.message.contains("x.jpg"), error.failure.message)
        }
    }
}
