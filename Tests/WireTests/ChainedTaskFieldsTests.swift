import Wire
import XCTest

/// Chained tasks (fields 300–305): a download's follow-on tilt-shift and the worker's capability survive a
/// round trip, and messages without them decode as before (what an older peer sends).
final class ChainedTaskFieldsTests: XCTestCase {
    private func roundTrip(_ message: Message) throws -> Message {
        try WireCodec.decode(WireCodec.encode(message))
    }

    private func chainedDownload() -> TaskAssignment {
        var download = TaskAssignment(
            taskID: "b/0/download", batchID: "b", attempt: 3, kind: .download,
            source: "https://example.org/a.jpg", taskKey: 10, sequence: 42)
        download.keepOutput = true
        download.s3Endpoint = "http://127.0.0.1:9000"
        download.followOn = ChainedTask(
            taskID: "b/0/tilt-shift", attempt: 101, taskKey: 11,
            parameters: WireTiltShiftParameters(
                focusPosition: 0.4, sharpBand: 0.1, transition: 0.2, blurRadius: 7,
                outputFormat: .png, jpegQuality: 0),
            sink: "s3://bucket/out", sinkName: "a")
        return download
    }

    func testAFollowOnRoundTripsAloneAndInABatch() throws {
        let download = chainedDownload()
        XCTAssertEqual(try roundTrip(.taskAssignment(download)), .taskAssignment(download))
        let batch = Message.taskAssignments([
            download, TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .download),
        ])
        XCTAssertEqual(try roundTrip(batch), batch)
    }

    func testTheChainedAssignmentTakesTheDownloadsBatchSourceAndEndpointAndItsImageByReference() throws {
        let download = chainedDownload()
        let tiltShift = try XCTUnwrap(download.chainedAssignment)
        XCTAssertEqual(tiltShift.kind, .tiltShift)
        XCTAssertEqual(tiltShift.taskID, "b/0/tilt-shift")
        XCTAssertEqual(tiltShift.attempt, 101)
        XCTAssertEqual(tiltShift.taskKey, 11)
        XCTAssertEqual(tiltShift.batchID, "b")
        XCTAssertEqual(tiltShift.source, "https://example.org/a.jpg")
        XCTAssertEqual(tiltShift.s3Endpoint, "http://127.0.0.1:9000")
        XCTAssertEqual(tiltShift.sink, "s3://bucket/out")
        XCTAssertEqual(tiltShift.sinkName, "a")
        XCTAssertEqual(tiltShift.parameters?.blurRadius, 7)
        XCTAssertEqual(tiltShift.inputs, [InjectedInput(fromTaskID: "b/0/download", data: [], onWorker: true)])
        XCTAssertFalse(tiltShift.keepOutput)
        XCTAssertNil(tiltShift.followOn)
        XCTAssertNil(TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: .download).chainedAssignment)
    }

    func testTheCapabilityRoundTripsAndIsOffWhenNotSent() throws {
        var hello = WorkerHello(workerID: "w", slots: 4, acceptsBatches: true)
        XCTAssertEqual(try roundTrip(.workerHello(hello)), .workerHello(hello))
        guard case .workerHello(let older) = try roundTrip(.workerHello(hello)) else { return XCTFail("not a hello") }
        XCTAssertFalse(older.acceptsChainedTasks, "an older worker's hello: no chained tasks")
        hello.acceptsChainedTasks = true
        XCTAssertEqual(try roundTrip(.workerHello(hello)), .workerHello(hello))
    }

    func testAnAssignmentWithoutAFollowOnAddsNoByte() {
        var download = chainedDownload()
        let chained = WireCodec.encode(.taskAssignment(download))
        download.followOn = nil
        let plain = WireCodec.encode(.taskAssignment(download))
        XCTAssertLessThan(plain.count, chained.count)
        var hello = WorkerHello(workerID: "w", slots: 4, acceptsBatches: true)
        let without = WireCodec.encode(.workerHello(hello))
        hello.acceptsChainedTasks = false
        XCTAssertEqual(WireCodec.encode(.workerHello(hello)), without)
    }
}
