import Wire
import XCTest

/// The imaging fields (numbers 140…): WebP/AVIF formats, their qualities, the colour and metadata policies,
/// and the warnings of a succeeded task, on the wire and in the journal; older peers skip them.
final class ImagingFieldsTests: XCTestCase {
    private let parameters = WireTiltShiftParameters(
        focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10, outputFormat: .avif, jpegQuality: 91,
        webpQuality: 77, avifQuality: 55, colourSRGB: true, stripMetadata: true)

    func testTheNewFieldsRoundTrip() throws {
        let warnings = ["ignored the embedded ICC profile: the embedded ICC profile is malformed", "ünïcode ✓"]
        let output = TaskOutput(data: [1, 2, 3], mediaType: "image/webp", width: 640, height: 427, warnings: warnings)
        let messages: [Message] = [
            .submitBatch(
                SubmitBatch(requestID: "r", items: [BatchItem(source: "https://x/y.jpg")], parameters: parameters)),
            .taskAssignment(
                TaskAssignment(
                    taskID: "b/0/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift, parameters: parameters)),
            .taskResult(TaskResult(taskID: "b/0/tilt-shift", attempt: 1, outcome: .output(output))),
            .itemFinished(ItemFinished(batchID: "b", itemIndex: 0, outputName: "y", outcome: .output(output))),
            .statusReply(
                StatusReply(
                    requestID: "s",
                    batches: [
                        BatchStatus(
                            batchID: "b", itemCount: 1, succeeded: 1,
                            items: [
                                ItemStatus(
                                    itemIndex: 0, source: "https://x/y.jpg", state: "succeeded", warnings: warnings)
                            ])
                    ])),
        ]
        for message in messages {
            XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message)
        }
        let record = JournalRecord.itemFinished(
            ItemFinished(batchID: "b", itemIndex: 0, outputName: "y", outcome: .output(output)))
        XCTAssertEqual(
            try JournalCodec.decode(JournalCodec.encode(record)), record, "the journal keeps an item's warnings")
    }

    func testWebPAndAVIFHaveTheirProtoValues() {
        XCTAssertEqual(WireImageFormat.webp.rawValue, 140)
        XCTAssertEqual(WireImageFormat.avif.rawValue, 141)
        XCTAssertEqual(WireImageFormat.tiff.rawValue, 142)
    }

    /// Defaults add no byte: parameters without the new settings encode exactly as before them, so what an
    /// older peer receives for a JPEG or PNG batch is unchanged.
    func testDefaultsAddNoBytes() {
        let plain = WireTiltShiftParameters(
            focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10,
            outputFormat: .jpeg, jpegQuality: 90)
        var withNew = plain
        withNew.webpQuality = 80
        let submit = { (p: WireTiltShiftParameters) in
            WireCodec.encode(.submitBatch(SubmitBatch(requestID: "r", items: [], parameters: p)))
        }
        // webp_quality = 80: field 140, varint: tag bytes E0 08, then 0x50.
        let extra = submit(withNew).count - submit(plain).count
        XCTAssertEqual(extra, 3)
        XCTAssertNotNil(submit(withNew).firstRange(of: [0xE0, 0x08, 0x50]))
    }
}
