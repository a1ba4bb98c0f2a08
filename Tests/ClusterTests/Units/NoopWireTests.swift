import ClusterSimulation
import Wire
import XCTest

/// The simulation's no-op fast path (`NoopAssignmentScan`, `NoopResultWriter`) against `WireCodec`: it
/// must read exactly the assignments `WireCodec` decodes, recognise nothing else, and send exactly the
/// bytes `WireCodec` encodes for a real worker's no-op results grouped as `MessageBatching` groups them.
/// `SimulatedPhotoWorkerTests` holds the same bytes to a real worker's.
final class NoopWireTests: XCTestCase {
    /// Task IDs of every length class: empty, short, one over a one-byte varint length, long.
    private static let taskIDs = [
        "", "b-1/0", String(repeating: "x", count: 127), "b-0123456789abcdef/" + String(repeating: "9", count: 200),
    ]

    private static func assignment(_ index: Int, kind: TaskKind = .noop) -> TaskAssignment {
        TaskAssignment(
            taskID: taskIDs[index % taskIDs.count] + (index < taskIDs.count ? "" : "/\(index)"),
            batchID: "b-1", attempt: [0, 1, 300, UInt32.max][index % 4], kind: kind, source: "noop",
            taskKey: [0, 1, 1 << 40, UInt64.max][(index / 4) % 4], sequence: UInt64(index))
    }

    /// What a real worker answers to a no-op assignment (`Worker.start`).
    private static func realAnswer(_ assignment: TaskAssignment) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(TaskOutput(data: [])),
            taskKey: assignment.taskKey)
    }

    /// Scans `message`'s bytes; the assignments found, with their task IDs read out.
    private func scan(_ bytes: [UInt8]) -> [TaskAssignment]? {
        bytes.withUnsafeBytes { buffer in
            var found: [NoopAssignment] = []
            guard NoopAssignmentScan.scan(buffer, into: &found) else {
                XCTAssertTrue(found.isEmpty, "a refused message left assignments behind")
                return nil
            }
            return found.map { noop in
                TaskAssignment(
                    taskID: String(decoding: buffer[noop.taskID], as: UTF8.self), batchID: "b-1", attempt: noop.attempt,
                    kind: .noop, source: "noop", taskKey: noop.taskKey, sequence: noop.sequence)
            }
        }
    }

    /// The messages `writer` sends for `assignments`' answers.
    private func written(_ assignments: [TaskAssignment], batches: Bool, maxCount: Int = 512) -> [[UInt8]] {
        var writer = NoopResultWriter(maxCount: maxCount)
        for assignment in assignments {
            Array(assignment.taskID.utf8).withUnsafeBytes {
                writer.add(taskID: $0, attempt: assignment.attempt, taskKey: assignment.taskKey)
            }
        }
        XCTAssertEqual(writer.count, assignments.count)
        var messages: [[UInt8]] = []
        writer.flush(batches: batches) { messages.append(Array($0)) }
        XCTAssertEqual(writer.count, 0, "a flush empties the writer")
        return messages
    }

    func testTheScanReadsWhatTheDecoderReadsFromEveryNoopAssignmentMessage() throws {
        let assignments = (0..<40).map { Self.assignment($0) }
        for message in [Message.taskAssignment(assignments[2]), .taskAssignments(assignments)] {
            let bytes = WireCodec.encode(message)
            let decoded = MessageBatching.unbatched(try WireCodec.decode(bytes)).compactMap {
                if case .taskAssignment(let assignment) = $0 { assignment } else { nil }
            }
            let scanned = try XCTUnwrap(scan(bytes), "\(message)")
            XCTAssertEqual(scanned.map(\.taskID), decoded.map(\.taskID))
            XCTAssertEqual(scanned.map(\.attempt), decoded.map(\.attempt))
            XCTAssertEqual(scanned.map(\.taskKey), decoded.map(\.taskKey))
            XCTAssertEqual(scanned.map(\.sequence), decoded.map(\.sequence))
        }
    }

    func testEverythingButNoopAssignmentsIsLeftToTheDecoder() {
        var mixed = (0..<3).map { Self.assignment($0) }
        mixed.append(Self.assignment(3, kind: .download))
        let refused: [Message] = [
            .taskAssignments(mixed),
            .taskAssignment(Self.assignment(1, kind: .tiltShift)),
            .taskAssignment(
                SimulatedPhotoWorkerTests.chainedDownload(source: "http://127.0.0.1:9/p.jpg", sink: "/out")),
            .welcome(Welcome(heartbeatIntervalMs: 1000, coordinatorID: "c", acceptsBatches: true)),
            .cancelTask(CancelTask(taskID: "b-1/0", reason: "cancelled", taskKey: 1)),
            .taskResult(Self.realAnswer(Self.assignment(1))),
        ]
        for message in refused { XCTAssertNil(scan(WireCodec.encode(message)), "\(message)") }

        let good = WireCodec.encode(.taskAssignments((0..<3).map { Self.assignment($0) }))
        var otherMajor = good
        otherMajor[1] = UInt8(WireProtocol.major + 1)
        XCTAssertNil(scan(otherMajor), "another major version")
        XCTAssertNil(scan([]), "no bytes")
        XCTAssertNil(scan(Array(good.prefix(4))), "an envelope without a body")
        for cut in [5, 9, good.count / 2, good.count - 1] {
            XCTAssertNil(scan(Array(good.prefix(cut))), "truncated at \(cut) of \(good.count)")
        }
        XCTAssertNil(scan(good + [0xFF]), "a dangling tag")
        XCTAssertNil(scan([0x08, 0x01, 0xBA, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]), "a length past the end")
        XCTAssertNotNil(scan(good), "the bytes the cases above spoil")
    }

    func testTheWrittenResultsAreTheBytesWireCodecEncodesForARealWorkersAnswers() {
        for count in [1, 2, 5, 40] {
            let answers = (0..<count).map { Self.realAnswer(Self.assignment($0)) }
            let expected = MessageBatching.coalesce(answers.map(Message.taskResult)).map(WireCodec.encode)
            XCTAssertEqual(
                written((0..<count).map { Self.assignment($0) }, batches: true), expected, "\(count) results")
            // A coordinator that takes no batch messages: each result alone.
            XCTAssertEqual(
                written((0..<count).map { Self.assignment($0) }, batches: false),
                answers.map { WireCodec.encode(.taskResult($0)) }, "\(count) results, no batches")
        }
    }

    func testManyResultsAreSplitAsMessageBatchingSplitsThem() {
        let assignments = (0..<1_030).map { Self.assignment($0) }
        let expected = MessageBatching.coalesce(assignments.map { Message.taskResult(Self.realAnswer($0)) }).map(
            WireCodec.encode)
        XCTAssertEqual(expected.count, 3, "512 + 512 + 6")
        XCTAssertEqual(written(assignments, batches: true), expected)
        // A smaller limit leaving one result alone at the end: a plain TaskResult message.
        let small = MessageBatching.coalesce(
            assignments.prefix(7).map { Message.taskResult(Self.realAnswer($0)) },
            limits: MessageBatching.Limits(maxCount: 3)
        ).map(WireCodec.encode)
        XCTAssertEqual(written(Array(assignments.prefix(7)), batches: true, maxCount: 3), small)
    }

    func testAWriterIsReusedAfterAFlushOrADrop() {
        var writer = NoopResultWriter()
        let first = Self.assignment(5)
        let second = Self.assignment(6)
        Array(first.taskID.utf8).withUnsafeBytes {
            writer.add(taskID: $0, attempt: first.attempt, taskKey: first.taskKey)
        }
        writer.removeAll()
        XCTAssertEqual(writer.count, 0)
        var sent: [[UInt8]] = []
        writer.flush(batches: true) { sent.append(Array($0)) }
        XCTAssertEqual(sent, [], "nothing to send after a drop")
        for _ in 0..<2 {
            Array(second.taskID.utf8).withUnsafeBytes {
                writer.add(taskID: $0, attempt: second.attempt, taskKey: second.taskKey)
            }
            writer.flush(batches: true) { sent.append(Array($0)) }
        }
        XCTAssertEqual(sent, Array(repeating: WireCodec.encode(.taskResult(Self.realAnswer(second))), count: 2))
    }
}
