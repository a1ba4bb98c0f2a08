import Wire
import XCTest

/// The focus line's angle (150) and the falloff (151) in `TiltShiftParameters`: they round-trip, add no byte
/// at their defaults (older peers see what they saw before), and an unknown falloff is an invalid field.
final class FocusAngleFieldsTests: XCTestCase {
    func testAngleAndFalloffRoundTrip() throws {
        let parameters = WireTiltShiftParameters(
            focusPosition: 0.4, sharpBand: 0.1, transition: 0.2, blurRadius: 8,
            angle: -37.5, falloff: .progressive)
        let messages: [Message] = [
            .submitBatch(
                SubmitBatch(requestID: "r", items: [BatchItem(source: "https://x/y.jpg")], parameters: parameters)),
            .taskAssignment(
                TaskAssignment(
                    taskID: "b/0/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift,
                    parameters: parameters)),
        ]
        for message in messages {
            XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message)
        }
        // The journal keeps a batch's SubmitBatch whole: a restarted coordinator sends the same recipe.
        let record = JournalRecord.batchAccepted(
            batchID: "b", client: [], submit: SubmitBatch(requestID: "r", items: [], parameters: parameters),
            unixMilliseconds: 1)
        XCTAssertEqual(try JournalCodec.decode(JournalCodec.encode(record)), record)
    }

    func testDefaultsAddNoBytes() {
        let plain = WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10)
        var turned = plain
        turned.angle = 90
        let submit = { (p: WireTiltShiftParameters) in
            WireCodec.encode(.submitBatch(SubmitBatch(requestID: "r", items: [], parameters: p)))
        }
        // angle = 90: field 150, fixed32: tag bytes B5 09, then 90.0 as a little-endian float (00 00 B4 42).
        XCTAssertEqual(submit(turned).count - submit(plain).count, 6)
        XCTAssertNotNil(submit(turned).firstRange(of: [0xB5, 0x09, 0x00, 0x00, 0xB4, 0x42]))
        XCTAssertEqual(WireFalloff.progressive.rawValue, 1)
    }

    func testAnUnknownFalloffIsAnInvalidField() {
        let bytes = ProtobufWriter.envelope(bodyField: BodyField.submitBatch) {
            $0.string(1, "request")
            $0.message(3) { $0.uint(151, 7) }
        }
        XCTAssertThrowsError(try WireCodec.decode(bytes)) { error in
            XCTAssertEqual(error as? WireError, .invalidField("SubmitBatch.parameters.falloff: unknown falloff 7"))
        }
    }
}
