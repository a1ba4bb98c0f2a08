import Wire
import XCTest

final class MalformedInputTests: XCTestCase {
    private func assertThrows(
        _ bytes: [UInt8], _ expected: WireError, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try WireCodec.decode(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? WireError, expected, file: file, line: line)
        }
    }

    private func assertMalformed(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try WireCodec.decode(bytes), file: file, line: line) { error in
            guard case .malformed = error as? WireError else {
                return XCTFail("expected .malformed, got \(error)", file: file, line: line)
            }
        }
    }

    func testEmptyInputIsMalformed() {
        assertThrows([], .malformed("empty input"))
        XCTAssertThrowsError(try WireCodec.decode(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    func testTruncatedInputIsMalformed() {
        let bytes = WireCodec.encode(SampleMessages.small[6])  // a task assignment with inputs
        assertMalformed(Array(bytes.dropLast()))
        assertMalformed(Array(bytes.prefix(bytes.count / 2)))
        // No prefix of an encoding is a valid message: the body is its last field.
        for length in 0..<bytes.count {
            XCTAssertThrowsError(try WireCodec.decode(Array(bytes.prefix(length))), "prefix of \(length) bytes")
        }
    }

    func testGarbageIsMalformed() {
        assertMalformed([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        assertMalformed([0x07])  // wire type 7 does not exist
        assertMalformed(Array("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n".utf8))
    }

    func testHugeDeclaredLengthsAreMalformed() {
        // major = 1, then a task assignment declared 4 GiB long.
        var writer = ProtobufWriter()
        writer.uint(1, 1)
        writer.tag(BodyField.taskAssignment, wireType: 2)
        writer.varint(0xFFFF_FFFF)
        assertMalformed(writer.bytes + [0x0A, 0x01, 0x41])
        // A body of plausible length whose bytes field declares 2^62 bytes.
        var body = ProtobufWriter()
        body.tag(1, wireType: 2)
        body.varint(1 << 62)
        var envelope = ProtobufWriter()
        envelope.uint(1, 1)
        envelope.bytes(BodyField.taskResult, body.bytes)
        assertMalformed(envelope.bytes)
        // A varint longer than ten bytes.
        assertMalformed([0x08] + [UInt8](repeating: 0x80, count: 12) + [0x01])
    }

    func testOtherMajorVersionsAreRefused() {
        let heartbeat = ProtobufWriter.envelope(major: 2, bodyField: BodyField.heartbeat) { $0.string(1, "w") }
        assertThrows(heartbeat, .unsupportedMajorVersion(received: 2, supported: 1))
        let noMajor = ProtobufWriter.envelope(major: 0, bodyField: BodyField.heartbeat) { $0.string(1, "w") }
        assertThrows(noMajor, .unsupportedMajorVersion(received: 0, supported: 1))
        // The version is checked before the body: a newer major version may have other bodies.
        assertThrows(
            ProtobufWriter.envelope(major: 2, bodyField: 99), .unsupportedMajorVersion(received: 2, supported: 1))
    }

    func testNewerMinorVersionsAreAccepted() throws {
        let bytes = ProtobufWriter.envelope(minor: 7, bodyField: BodyField.heartbeat) {
            $0.string(1, "w")
            $0.uint(2, 4)
            $0.string(15, "a field from the future")  // unknown fields are skipped
        }
        XCTAssertEqual(try WireCodec.decode(bytes), .heartbeat(Heartbeat(workerID: "w", running: 4)))
    }

    func testMissingOrUnknownBody() {
        assertThrows(ProtobufWriter.envelope(bodyField: nil), .missingBody)
        assertThrows(ProtobufWriter.envelope(bodyField: 99) { $0.string(1, "from a newer peer") }, .missingBody)
    }

    func testAnAssignmentOfAnUnknownTaskKindDecodesAsUnspecifiedSoTheWorkerCanAnswerIt() throws {
        // A newer coordinator may send kinds this worker does not know: it must still learn the task ID
        // to answer with a failure (and free the slot), so the assignment decodes with kind `.unspecified`.
        for raw in [UInt64(9), UInt64.max] {
            let bytes = ProtobufWriter.envelope(bodyField: BodyField.taskAssignment) {
                $0.string(1, "task")
                $0.uint(4, raw)
            }
            guard case .taskAssignment(let assignment) = try WireCodec.decode(bytes) else {
                return XCTFail("expected a task assignment")
            }
            XCTAssertEqual(assignment.taskID, "task")
            XCTAssertEqual(assignment.kind, .unspecified)
        }
    }

    func testASubmissionOfAnUnknownKindIsAnInvalidField() {
        let bytes = ProtobufWriter.envelope(bodyField: BodyField.submitBatch) {
            $0.string(1, "request")
            $0.uint(4, 9)
        }
        XCTAssertThrowsError(try WireCodec.decode(bytes)) { error in
            XCTAssertEqual(error as? WireError, .invalidField("SubmitBatch.kind: unknown task kind 9"))
        }
    }

    func testUnknownImageFormatIsAnInvalidField() {
        let bytes = ProtobufWriter.envelope(bodyField: BodyField.submitBatch) {
            $0.string(1, "request")
            $0.message(3) { $0.uint(5, 3) }
        }
        XCTAssertThrowsError(try WireCodec.decode(bytes)) { error in
            XCTAssertEqual(
                error as? WireError, .invalidField("SubmitBatch.parameters.output_format: unknown image format 3"))
        }
    }

    func testUnknownFailureCodeReadsAsUnspecified() throws {
        let bytes = ProtobufWriter.envelope(bodyField: BodyField.taskResult) {
            $0.string(1, "task")
            $0.uint(2, 3)
            $0.message(4) {
                $0.uint(1, 42)
                $0.string(2, "a failure from the future")
            }
        }
        XCTAssertEqual(
            try WireCodec.decode(bytes),
            .taskResult(
                TaskResult(
                    taskID: "task", attempt: 3,
                    outcome: .failure(TaskFailure(code: .unspecified, message: "a failure from the future")))))
    }

    func testResultWithoutOutcomeIsAnInvalidField() {
        let result = ProtobufWriter.envelope(bodyField: BodyField.taskResult) { $0.string(1, "task") }
        assertThrows(result, .invalidField("TaskResult.outcome is not set"))
        let item = ProtobufWriter.envelope(bodyField: BodyField.itemFinished) { $0.string(1, "batch") }
        assertThrows(item, .invalidField("ItemFinished.outcome is not set"))
    }

    func testInvalidUTF8IsRepairedNotFatal() throws {
        let bytes = ProtobufWriter.envelope(bodyField: BodyField.heartbeat) { $0.bytes(1, [0x61, 0xFF, 0xFE, 0x62]) }
        // protobuf-c may reject invalid UTF-8 or pass it on; either way there is no crash, and what
        // passes is repaired.
        if case .heartbeat(let heartbeat)? = try? WireCodec.decode(bytes) {
            XCTAssertEqual(heartbeat.workerID, "a\u{FFFD}\u{FFFD}b")
        }
    }

    func testErrorsDescribeThemselves() {
        XCTAssertEqual(
            WireError.unsupportedMajorVersion(received: 2, supported: 1).description,
            "unsupported wire protocol major version 2 (this peer speaks 1)")
        XCTAssertTrue(WireError.malformed("x").description.contains("x"))
        XCTAssertFalse(WireError.missingBody.description.isEmpty)
        XCTAssertTrue(WireError.invalidField("y").description.contains("y"))
    }

    func testAStringFieldThatIsNotUTF8IsMalformed() throws {
        // A heartbeat whose worker_id (field 1) holds bytes that are not UTF-8: refused, not repaired.
        let invalid = ProtobufWriter.envelope(major: 1, bodyField: BodyField.heartbeat) {
            $0.bytes(1, [0x77, 0xFF, 0xFE, 0x0A])
        }
        assertMalformed(invalid)
        let valid = ProtobufWriter.envelope(major: 1, bodyField: BodyField.heartbeat) { $0.string(1, "wörker") }
        guard case .heartbeat(let heartbeat) = try WireCodec.decode(valid) else {
            return XCTFail("expected a heartbeat")
        }
        XCTAssertEqual(heartbeat.workerID, "wörker")
    }
}
