import Imaging
import ShiftworkTestSupport
import Wire
import XCTest

@testable import Cluster

/// The angle and the falloff between the filter's parameters and the wire's, and the angle's bound checked
/// where the worker takes it (the filter's validation): a value from the network that is not finite or is out
/// of range fails the item, naming the angle, never reaches the filter.
final class FocusAngleConversionTests: XCTestCase {
    func testAngleAndFalloffSurviveTheWire() {
        let parameters = TiltShiftParameters(
            focusPosition: 0.3, sharpBand: 0.1, transition: 0.2, blurRadius: 7,
            angle: -120, falloff: .progressive)
        let wire = WireTiltShiftParameters(parameters, encoding: EncodingOptions())
        XCTAssertEqual(wire.angle, -120)
        XCTAssertEqual(wire.falloff, .progressive)
        XCTAssertEqual(
            wire.filterParameters,
            TiltShiftParameters(
                focusPosition: Double(Float(0.3)), sharpBand: Double(Float(0.1)), transition: Double(Float(0.2)),
                blurRadius: 7,
                angle: -120, falloff: .progressive))
    }

    func testAnAngleFromTheNetworkIsCheckedBeforeTheFilter() throws {
        for angle in [Float.nan, .infinity, -.infinity, 360.01, -1e30] {
            let wire = WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10, angle: angle)
            XCTAssertThrowsError(
                try TiltShiftPipeline.process(
                    try SyntheticImages.make(width: 16, height: 16, format: .png, seed: 1),
                    parameters: wire.filterParameters, encoding: wire.encodingOptions)
            ) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, .processing, "\(angle)")
                XCTAssertTrue("\(error)".contains("angle (degrees) must be between -360.0 and 360.0"), "\(error)")
            }
        }
    }
}
