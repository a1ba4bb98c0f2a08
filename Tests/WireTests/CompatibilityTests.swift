import Wire
import XCTest

/// What peers of minor 1 send, written byte by byte as they write it (no minor-2 fields), decodes into
/// what minor-2 code acts on; and what minor-2 peers add is only new fields and one new body, which
/// minor-1 decoders skip or never receive.
final class CompatibilityTests: XCTestCase {
    private static let refusalField: UInt64 = 50
    private static let cancelTaskField: UInt64 = 22
    private static let cancelBatchField: UInt64 = 32

    func testAMinorOneUnknownWorkerRefusalIsKnownByItsTextAndNoOtherRefusalIs() throws {
        let legacy = ProtobufWriter.envelope(minor: 1, bodyField: Self.refusalField) {
            $0.string(2, "unknown worker: send hello")
        }
        XCTAssertEqual(try WireCodec.decode(legacy), .refusal(.unknownWorker))
        let other = ProtobufWriter.envelope(minor: 1, bodyField: Self.refusalField) {
            $0.string(1, "r-1")
            $0.string(2, "no batch b-x: `shiftwork status` lists the batches the coordinator knows")
        }
        guard case .refusal(let refusal) = try WireCodec.decode(other) else { return XCTFail("not a refusal") }
        XCTAssertEqual(refusal.code, .unspecified, "only the unknown-worker text has a meaning of its own")
        XCTAssertEqual(refusal.requestID, "r-1")
    }

    func testARefusalCodeFromANewerPeerReadsAsUnspecified() throws {
        let newer = ProtobufWriter.envelope(minor: 9, bodyField: Self.refusalField) {
            $0.string(2, "a reason")
            $0.uint(3, 99)
        }
        XCTAssertEqual(try WireCodec.decode(newer), .refusal(Refusal(code: .unspecified, reason: "a reason")))
    }

    func testMinorOneCancelsDecodeWithoutRequestIDOrTaskKey() throws {
        let cancelBatch = ProtobufWriter.envelope(minor: 1, bodyField: Self.cancelBatchField) {
            $0.string(1, "b-1")
            $0.bytes(2, [3, 5])  // packed item_indexes
        }
        XCTAssertEqual(
            try WireCodec.decode(cancelBatch), .cancelBatch(CancelBatch(batchID: "b-1", itemIndexes: [3, 5])))
        let cancelTask = ProtobufWriter.envelope(minor: 1, bodyField: Self.cancelTaskField) {
            $0.string(1, "b-1/3/download")
            $0.string(2, "cancelled")
        }
        XCTAssertEqual(
            try WireCodec.decode(cancelTask), .cancelTask(CancelTask(taskID: "b-1/3/download", reason: "cancelled")))
    }

    /// A message of this minor with its new fields at their defaults is byte for byte what a minor-1 peer
    /// sends, but for the minor number: nothing new travels unless it is used.
    func testNewFieldsAtTheirDefaultsAddNoBytes() {
        let minorOne = ProtobufWriter.envelope(minor: 1, bodyField: Self.cancelTaskField) {
            $0.string(1, "t")
            $0.string(2, "cancelled")
        }
        var minorTwo = WireCodec.encode(.cancelTask(CancelTask(taskID: "t", reason: "cancelled")))
        XCTAssertEqual(minorTwo[3], UInt8(WireProtocol.minor), "the envelope says this build's minor")
        minorTwo[3] = 1
        XCTAssertEqual(minorTwo, minorOne)
    }
}
