import Foundation
import XCTest

@testable import Imaging

/// The filter's output on two photographs (derived from samples/), compared with files made by this code
/// when it was checked against the exact Gaussian (see FilterTests): a guard against regressions.
///
/// To regenerate after an intended change: `IMAGING_UPDATE_GOLDEN=1 swift test --filter GoldenTests`.
final class GoldenTests: XCTestCase {
    private struct Case {
        let input: String
        let golden: String
        let parameters: TiltShiftParameters
    }

    private let cases = [
        Case(input: "photo.jpg", golden: "golden-photo-coreimage.png", parameters: .coreImage),
        Case(
            input: "photo.png", golden: "golden-photo-custom.png",
            parameters: TiltShiftParameters(focusPosition: 0.4, sharpBand: 0.1, transition: 0.2, blurRadius: 4)),
        Case(input: "gray.png", golden: "golden-gray.png", parameters: TiltShiftParameters(blurRadius: 3)),
        Case(input: "rgba.png", golden: "golden-rgba.png", parameters: TiltShiftParameters(blurRadius: 3)),
    ]

    func testOutputMatchesTheGoldenFiles() throws {
        let update = ProcessInfo.processInfo.environment["IMAGING_UPDATE_GOLDEN"] == "1"
        for testCase in cases {
            let input = try ImageCodec.decode(TestImages.fixture(testCase.input)).image
            let output = try TiltShiftFilter.apply(to: input, parameters: testCase.parameters)
            if update {
                let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                    "Fixtures")
                try Data(PNGCodec.encode(output, compressionLevel: 9)).write(
                    to: source.appendingPathComponent(testCase.golden))
                continue
            }
            let golden = try PNGCodec.decode(TestImages.fixture(testCase.golden))
            XCTAssertEqual(golden.width, output.width)
            XCTAssertEqual(golden.height, output.height)
            XCTAssertEqual(golden.channels, output.channels)
            // Identical on the machine that made them; a different compiler or CPU may round a sample the
            // other way now and then.
            XCTAssertLessThanOrEqual(TestImages.maxDifference(golden, output), 1, testCase.golden)
            XCTAssertGreaterThan(TestImages.psnr(golden, output), 60, testCase.golden)
        }
    }

    func testThreadsDoNotChangeTheGoldenOutput() throws {
        let input = try ImageCodec.decode(TestImages.fixture("photo.jpg")).image
        XCTAssertEqual(
            try TiltShiftFilter.apply(to: input, threads: 1), try TiltShiftFilter.apply(to: input, threads: 4))
    }
}

final class InPlaceTests: XCTestCase {
    func testInPlaceEqualsCopyForEveryChannelCount() throws {
        for name in ["photo.jpg", "gray.png", "rgba.png", "photo.png"] {
            let image = try ImageCodec.decode(TestImages.fixture(name)).image
            for threads in [1, 3] {
                let copy = try TiltShiftFilter.apply(to: image, parameters: .coreImage, threads: threads)
                var inPlace = image
                try TiltShiftFilter.applyInPlace(&inPlace, parameters: .coreImage, threads: threads)
                XCTAssertEqual(inPlace, copy, "\(name), \(threads) threads")
                XCTAssertNotEqual(inPlace, image)
            }
        }
    }
}
