import Dispatch
import Foundation
import Wire
import XCTest

final class RoundTripTests: XCTestCase {
    private func assertRoundTrip(_ message: Message, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = WireCodec.encode(message)
        do {
            let decoded = try WireCodec.decode(bytes)
            XCTAssertEqual(decoded, message, file: file, line: line)
            let viaPointer = try bytes.withUnsafeBytes { buffer in try WireCodec.decode(buffer) }
            XCTAssertEqual(viaPointer, message, file: file, line: line)
        } catch {
            XCTFail("decoding \(message) failed: \(error)", file: file, line: line)
        }
    }

    func testEveryCaseRoundTrips() {
        let messages = SampleMessages.small
        for message in messages {
            assertRoundTrip(message)
        }
        // One sample per case at least: a case added to Message must be added to the samples.
        let cases = Set(messages.map { String(describing: $0).prefix { $0 != "(" } })
        XCTAssertEqual(cases.count, 25, "samples cover \(cases.sorted())")
    }

    func testLargePayloadsAndLongRepeatedFieldsRoundTrip() {
        for message in SampleMessages.large {
            assertRoundTrip(message)
        }
    }

    func testDefaultValuedFieldsRoundTrip() {
        let messages: [Message] = [
            .workerHello(WorkerHello(workerID: "", slots: 0)),
            .heartbeat(Heartbeat(workerID: "")),
            .taskResult(TaskResult(taskID: "", attempt: 0, outcome: .output(TaskOutput(data: [])))),
            .taskResult(TaskResult(taskID: "", attempt: 0, outcome: .failure(TaskFailure(code: .unspecified)))),
            .taskAssignment(TaskAssignment(taskID: "", batchID: "", attempt: 0, kind: .unspecified)),
            .taskAssignment(
                TaskAssignment(
                    taskID: "", batchID: "", attempt: 0, kind: .tiltShift,
                    parameters: WireTiltShiftParameters(focusPosition: 0, sharpBand: 0, transition: 0, blurRadius: 0))),
            .submitBatch(SubmitBatch(requestID: "", items: [BatchItem(source: "")])),
            .statusReply(StatusReply(requestID: "")),
            .refusal(Refusal(reason: "")),
        ]
        for message in messages {
            assertRoundTrip(message)
        }
    }

    func testEveryEnumValueRoundTrips() {
        for code in FailureCode.allCases {
            assertRoundTrip(
                .taskResult(TaskResult(taskID: "t", attempt: 1, outcome: .failure(TaskFailure(code: code)))))
        }
        for code in RefusalCode.allCases where code != .unspecified {
            assertRoundTrip(.refusal(Refusal(requestID: "r", code: code, reason: "why")))
        }
        for kind in TaskKind.allCases {
            assertRoundTrip(.taskAssignment(TaskAssignment(taskID: "t", batchID: "b", attempt: 1, kind: kind)))
        }
        for format in WireImageFormat.allCases {
            var parameters = SampleMessages.parameters
            parameters.outputFormat = format
            assertRoundTrip(.submitBatch(SubmitBatch(requestID: "r", items: [], parameters: parameters)))
        }
    }

    /// The encoding is the proto's: field numbers and wire types as written in shiftwork.proto.
    func testEncodingMatchesTheProtoByteForByte() {
        let bytes = WireCodec.encode(.heartbeat(Heartbeat(workerID: "w", running: 3)))
        // major = 1; minor = 3; heartbeat (field 11, length 5) { worker_id = "w"; running = 3 }
        XCTAssertEqual(bytes, [0x08, 0x01, 0x10, 0x03, 0x5A, 0x05, 0x0A, 0x01, 0x77, 0x10, 0x03])
    }

    func testEncodedEnvelopeCarriesTheVersion() throws {
        let bytes = WireCodec.encode(.refusal(Refusal(reason: "x")))
        XCTAssertEqual(Array(bytes.prefix(2)), [0x08, UInt8(WireProtocol.major)])
        XCTAssertEqual(WireProtocol.major, 1)
        XCTAssertEqual(WireProtocol.minor, 3)
    }

    func testStringsEndAtTheFirstNULCharacter() throws {
        let decoded = try WireCodec.decode(WireCodec.encode(.heartbeat(Heartbeat(workerID: "ab\u{0}cd", running: 1))))
        XCTAssertEqual(decoded, .heartbeat(Heartbeat(workerID: "ab", running: 1)))
    }

    func testConcurrentEncodingAndDecoding() {
        let messages = SampleMessages.small
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<50 {
                let message = messages[(worker + round) % messages.count]
                if (try? WireCodec.decode(WireCodec.encode(message))) != message {
                    failures.increment()
                }
            }
        }
        XCTAssertEqual(failures.value, 0)
    }
}

/// A thread-safe counter for the concurrency test.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
