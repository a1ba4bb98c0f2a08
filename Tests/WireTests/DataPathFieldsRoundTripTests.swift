import Wire
import XCTest

/// The minor-3 fields that keep image bytes off the coordinator (locality and sinks) survive a round
/// trip, and a message without them decodes with their defaults (what an older peer sends).
final class DataPathFieldsRoundTripTests: XCTestCase {
    private func roundTrip(_ message: Message) throws -> Message {
        try WireCodec.decode(WireCodec.encode(message))
    }

    func testAssignmentSinkAndKeepOutputRoundTrip() throws {
        var download = TaskAssignment(
            taskID: "b/0/download", batchID: "b", attempt: 1, kind: .download, source: "s3://in/a.jpg")
        download.keepOutput = true
        download.s3Endpoint = "http://127.0.0.1:9000"
        var tiltShift = TaskAssignment(taskID: "b/0/tilt-shift", batchID: "b", attempt: 2, kind: .tiltShift)
        tiltShift.sink = "/shared/out"
        tiltShift.sinkName = "a"
        for assignment in [download, tiltShift] {
            XCTAssertEqual(try roundTrip(.taskAssignment(assignment)), .taskAssignment(assignment))
        }
        let decoded = try roundTrip(
            .taskAssignment(TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .download)))
        guard case .taskAssignment(let plain) = decoded else { return XCTFail("decoded \(decoded)") }
        XCTAssertFalse(plain.keepOutput)
        XCTAssertEqual(plain.sink, "")
    }

    func testOutputMetadataRoundTrips() throws {
        let held = TaskOutput(heldOnWorker: true, size: 4_000_000, mediaType: "image/jpeg")
        let written = TaskOutput(
            location: "s3://bucket/out/a.jpg", size: 3_500_123, crc32c: 0xE306_9283,
            mediaType: "image/jpeg", width: 4000, height: 3000)
        for output in [held, written] {
            let message = Message.taskResult(TaskResult(taskID: "t", attempt: 1, outcome: .output(output), taskKey: 7))
            XCTAssertEqual(try roundTrip(message), message)
            XCTAssertTrue(output.data.isEmpty)
        }
    }

    func testSubmitSinkStatusLocationAndSinkFailureRoundTrip() throws {
        var submit = SubmitBatch(
            requestID: "r", items: [BatchItem(source: "https://example.org/a.jpg", outputName: "a")])
        submit.sink = "s3://bucket/prefix"
        submit.s3Endpoint = "http://127.0.0.1:9000"
        XCTAssertEqual(try roundTrip(.submitBatch(submit)), .submitBatch(submit))
        let status = StatusReply(
            requestID: "r",
            batches: [
                BatchStatus(
                    batchID: "b", itemCount: 1, succeeded: 1,
                    items: [ItemStatus(itemIndex: 0, source: "a", state: "succeeded", location: "/shared/out/a.jpg")])
            ])
        XCTAssertEqual(try roundTrip(.statusReply(status)), .statusReply(status))
        let failure = Message.taskResult(
            TaskResult(
                taskID: "t", attempt: 1,
                outcome: .failure(
                    TaskFailure(
                        code: .sink, message: "sink /shared/out: Read-only file system"))))
        XCTAssertEqual(try roundTrip(failure), failure)
    }
}
