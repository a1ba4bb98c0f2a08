import Wire
import XCTest

/// The fields of issue #28 travel: per-client usage and limits in `StatusReply`, and an assignment whose
/// image format this version does not know decodes with the field named (`unreadableField`) instead of
/// failing, so that the worker can answer it.
final class BoundsFieldsRoundTripTests: XCTestCase {
    func testClientUsageAndLimitsRoundTrip() throws {
        var reply = StatusReply(requestID: "r")
        reply.clients = [
            ClientStatus(client: "key rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", queuedItems: .max, batches: 0),
            ClientStatus(client: "peer client-1", queuedItems: 3, batches: 1),
        ]
        reply.maxQueuedItemsPerClient = 250_000
        reply.maxBatchesPerClient = 1_000
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(.statusReply(reply))), .statusReply(reply))
    }

    func testAnAssignmentWithAnUnknownImageFormatDecodesWithTheFieldNamed() throws {
        var parameters = WireTiltShiftParameters(
            focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10,
            outputFormat: .png)
        parameters.jpegQuality = 90
        let assignment = TaskAssignment(
            taskID: "t", batchID: "b", attempt: 1, kind: .tiltShift, parameters: parameters, taskKey: 7)
        var bytes = WireCodec.encode(.taskAssignment(assignment))
        // IMAGE_FORMAT_PNG (2) is the bytes 0x28 0x02 (field 5, varint) inside the parameters: make it 3.
        let index = try XCTUnwrap((0..<bytes.count - 1).first { bytes[$0] == 0x28 && bytes[$0 + 1] == 0x02 })
        bytes[index + 1] = 0x03
        guard case .taskAssignment(let decoded) = try WireCodec.decode(bytes) else {
            return XCTFail("not an assignment")
        }
        XCTAssertEqual(decoded.taskKey, 7)
        XCTAssertNil(decoded.parameters)
        XCTAssertEqual(decoded.unreadableField, "TaskAssignment.parameters.output_format: unknown image format 3")
        // Elsewhere an unknown format still makes the message invalid.
        var submitBytes = WireCodec.encode(
            .submitBatch(SubmitBatch(requestID: "r", items: [BatchItem(source: "s")], parameters: parameters)))
        let at = try XCTUnwrap(
            (0..<submitBytes.count - 1).first { submitBytes[$0] == 0x28 && submitBytes[$0 + 1] == 0x02 })
        submitBytes[at + 1] = 0x03
        XCTAssertThrowsError(try WireCodec.decode(submitBytes))
    }
}
