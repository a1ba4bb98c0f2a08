import Cluster
import Wire
import XCTest

/// `MessageBounds`: every field a peer sends is checked against its limit; the violation names the field
/// and the limit, and is coded `.limit` (over a size) or `.invalidRequest` (outside a range).
final class MessageBoundsTests: XCTestCase {
    private func violation(_ message: Message) -> MessageBounds.Violation? {
        MessageBounds.violation(in: message, maxBatchItems: 100)
    }

    func testValuesAtTheLimitPassAndJustPastItAreRefusedNamingFieldAndLimit() throws {
        let id = String(repeating: "i", count: MessageBounds.maxIDBytes)
        XCTAssertNil(violation(.statusRequest(StatusRequest(requestID: id, batchID: id))))
        let over = try XCTUnwrap(violation(.statusRequest(StatusRequest(requestID: id + "i"))))
        XCTAssertEqual(over.field, "StatusRequest.request_id")
        XCTAssertEqual(over.code, .limit)
        XCTAssertEqual(over.reason, "StatusRequest.request_id is 257 bytes long, more than the limit of 256")

        XCTAssertNil(violation(.workerHello(WorkerHello(workerID: "w", slots: 4096, giveBackThreads: 4096))))
        XCTAssertEqual(
            violation(.workerHello(WorkerHello(workerID: "w", slots: .max)))?.reason,
            "WorkerHello.slots is 4294967295, more than the limit of 4096: start the worker with a lower --slots")
        XCTAssertEqual(
            violation(.workerHello(WorkerHello(workerID: "w", slots: 1, giveBackThreads: 4097)))?.field,
            "WorkerHello.give_back_threads")

        let holding = Heartbeat(workerID: "w", holding: Array(repeating: 1, count: MessageBounds.maxHeldTasks + 1))
        XCTAssertEqual(violation(.heartbeat(holding))?.field, "Heartbeat.holding")
        XCTAssertNil(
            violation(.heartbeat(Heartbeat(workerID: "w", running: 8192, droppedMessages: .max, lastSequence: .max))))

        XCTAssertEqual(
            violation(.cancelBatch(CancelBatch(batchID: "b", itemIndexes: Array(repeating: 0, count: 101))))?.field,
            "CancelBatch.item_indexes")
        XCTAssertEqual(
            violation(.retryBatch(RetryBatch(requestID: "r", batchID: "b", items: Array(repeating: "x", count: 101))))?
                .field,
            "RetryBatch.items")
    }

    func testAnOutputNameIsARelativePathThatStaysBelowTheOutputDirectory() throws {
        func submit(_ name: String) -> Message {
            .submitBatch(
                SubmitBatch(
                    requestID: "r",
                    items: [
                        BatchItem(source: "https://x.org/a.jpg"),
                        BatchItem(source: "https://x.org/b.jpg", outputName: name),
                    ]))
        }
        for name in ["", "b", "2024/01/IMG_0001", "my photo #1 (copy)"] { XCTAssertNil(violation(submit(name)), name) }
        for name in ["../x", "a/../../x", "/etc/x", "a\u{0}b", ".hidden"] {
            let refused = try XCTUnwrap(violation(submit(name)), name)
            XCTAssertEqual(refused.field, "SubmitBatch.items[1].output_name")
            XCTAssertEqual(refused.code, .invalidRequest)
        }
        let long = try XCTUnwrap(violation(submit(String(repeating: "x", count: 10_000))))
        XCTAssertEqual(long.code, .limit)
        XCTAssertEqual(long.reason, "SubmitBatch.items[1].output_name is 10000 bytes long, more than the limit of 1024")
    }

    func testResultsAreCheckedElementByElementAndCountedWithoutIndexes() throws {
        var output = TaskOutput(data: [], warnings: Array(repeating: "w", count: 65))
        let one = TaskResult(taskID: "t", attempt: 1, outcome: .output(output))
        XCTAssertEqual(violation(.taskResult(one))?.field, "TaskResult.output.warnings")
        output.warnings = []
        output.size = .max
        let batch = [
            TaskResult(taskID: "t", attempt: 1, outcome: .output(TaskOutput(data: []))),
            TaskResult(taskID: "u", attempt: 1, outcome: .output(output)),
        ]
        let refused = try XCTUnwrap(violation(.taskResults(batch)))
        XCTAssertEqual(refused.field, "TaskResultBatch.results[1].output.size")
        XCTAssertEqual(refused.counterField, "TaskResultBatch.results.output.size")
        let message = String(repeating: "m", count: MessageBounds.maxTextBytes + 1)
        XCTAssertEqual(
            violation(
                .taskResult(
                    TaskResult(
                        taskID: "t", attempt: 1, outcome: .failure(TaskFailure(code: .download, message: message)))))?
                .field,
            "TaskResult.failure.message")
    }

    func testParametersOutsideTheirRangesAreInvalid() throws {
        func submit(_ parameters: WireTiltShiftParameters) -> Message {
            .submitBatch(
                SubmitBatch(requestID: "r", items: [BatchItem(source: "http://x/a.jpg")], parameters: parameters))
        }
        XCTAssertNil(
            violation(submit(WireTiltShiftParameters(focusPosition: 1, sharpBand: 0, transition: 0, blurRadius: 500))))
        let nan = try XCTUnwrap(
            violation(submit(WireTiltShiftParameters(focusPosition: .nan, sharpBand: 0, transition: 0, blurRadius: 0))))
        XCTAssertEqual(nan.field, "SubmitBatch.parameters.focus_position")
        XCTAssertEqual(nan.code, .invalidRequest)
        XCTAssertEqual(
            violation(
                submit(WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: .infinity)))?
                .field,
            "SubmitBatch.parameters.blur_radius")
        var quality = WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 10)
        quality.jpegQuality = 101
        XCTAssertEqual(violation(submit(quality))?.field, "SubmitBatch.parameters.jpeg_quality")
    }

    func testAssignmentsAndAnswersAreCheckedOnTheirReceiversSide() throws {
        let unknown = TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .unspecified)
        XCTAssertEqual(MessageBounds.violation(in: unknown)?.field, "TaskAssignment.kind")
        let inputs = TaskAssignment(
            taskID: "t", batchID: "b", attempt: 1, kind: .tiltShift,
            inputs: Array(repeating: InjectedInput(fromTaskID: "d", data: []), count: 17))
        XCTAssertEqual(MessageBounds.violation(in: inputs)?.field, "TaskAssignment.inputs")
        XCTAssertNil(
            MessageBounds.violation(
                in: TaskAssignment(
                    taskID: "t", batchID: "b", attempt: .max, kind: .noop,
                    taskKey: .max, sequence: .max)))

        XCTAssertEqual(
            MessageBounds.violation(
                inAnswer: .batchAccepted(BatchAccepted(requestID: "r", batchID: "b", itemCount: .max)))?.field,
            "BatchAccepted.item_count")
        XCTAssertEqual(
            MessageBounds.violation(
                inAnswer: .itemsAdded(ItemsAdded(batchID: "b", parentIndex: 0, firstIndex: .max, items: [])))?.field,
            "ItemsAdded.first_index + items")
        XCTAssertNil(
            MessageBounds.violation(
                inAnswer: .batchAccepted(BatchAccepted(requestID: "r", batchID: "b", itemCount: 100_000))))
    }
}
