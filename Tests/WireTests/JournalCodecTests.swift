import Wire
import XCTest

/// Journal records round-trip through protobuf-c, and damaged ones are errors, never traps.
final class JournalCodecTests: XCTestCase {
    /// One record of each kind (also the seeds of the journal fuzz corpus, see FuzzCorpusTests).
    static let sampleRecords: [JournalRecord] = [
        .started(coordinatorID: "coordinator-1", incarnation: 3, unixMilliseconds: 1_790_000_000_000),
        .batchAccepted(
            batchID: "b-1", client: Array("client-ü".utf8) + [0, 255],
            submit: SubmitBatch(
                requestID: "r", items: [BatchItem(source: "https://example.com/a.jpg", outputName: "a")],
                parameters: WireTiltShiftParameters(focusPosition: 0.4, sharpBand: 0.1, transition: 0.2, blurRadius: 9)),
            unixMilliseconds: 42, ownerKey: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"),
        .batchAccepted(
            batchID: "b-2", client: [], submit: SubmitBatch(requestID: "", items: [], kind: .noop), unixMilliseconds: 0),
        .itemFinished(
            ItemFinished(
                batchID: "b-1", itemIndex: 7, outputName: "a",
                outcome: .output(TaskOutput(data: [], mediaType: "image/jpeg", width: 4000, height: 3000)))),
        .itemFinished(
            ItemFinished(
                batchID: "b-1", itemIndex: 0, outcome: .failure(TaskFailure(code: .download, message: "HTTP 404")))),
        .batchCancelled(CancelBatch(batchID: "b-1", itemIndexes: [1, 2])),
        .itemsAdded(
            ItemsAdded(
                batchID: "b-1", parentIndex: 0, firstIndex: 1, items: [BatchItem(source: "/x.png", outputName: "x")])),
        .batchRetired(batchID: "b-1"),
        .batchRetried(batchID: "b-1", itemIndexes: [0, 2, UInt32.max], unixMilliseconds: 1_790_000_000_001),
    ]

    func testEveryRecordRoundTrips() throws {
        for record in Self.sampleRecords {
            XCTAssertEqual(try JournalCodec.decode(JournalCodec.encode(record)), record)
        }
    }

    func testDamagedRecordsAreErrors() {
        XCTAssertThrowsError(try JournalCodec.decode([]))
        XCTAssertThrowsError(try JournalCodec.decode([0xFF, 0xFF, 0xFF]))
        var random = SystemRandomNumberGenerator()
        for record in Self.sampleRecords {
            let bytes = JournalCodec.encode(record)
            for cut in 1..<bytes.count {
                _ = try? JournalCodec.decode(Array(bytes.prefix(cut)))  // error or a shorter record, never a trap
            }
            var mutated = bytes
            mutated[Int.random(in: 0..<mutated.count, using: &random)] ^= 0x5A
            _ = try? JournalCodec.decode(mutated)
        }
    }
}
