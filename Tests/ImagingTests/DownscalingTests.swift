import XCTest

@testable import Imaging

/// `ImageBuffer.downscaled(toFit:)`: the dashboard's previews.
final class DownscalingTests: XCTestCase {
    func testEachOutputPixelIsTheMeanOfTheBoxItCovers() throws {
        // 4×2 gray: the left 2×2 box averages to 25, the right one to 200.
        let image = try ImageBuffer(width: 4, height: 2, channels: 1, pixels: [0, 50, 100, 200, 20, 30, 250, 250])
        let small = image.downscaled(toFit: 2)
        XCTAssertEqual(small.width, 2)
        XCTAssertEqual(small.height, 1)
        XCTAssertEqual(small.pixels, [25, 200])
    }

    func testTheAspectRatioIsKeptAndSmallImagesAreLeftAlone() {
        let wide = ImageBuffer(width: 1000, height: 250, channels: 3, filledWith: 7)
        let small = wide.downscaled(toFit: 160)
        XCTAssertEqual([small.width, small.height, small.channels], [160, 40, 3])
        XCTAssertTrue(small.pixels.allSatisfy { $0 == 7 })
        let tall = ImageBuffer(width: 3, height: 900, channels: 4).downscaled(toFit: 160)
        XCTAssertEqual([tall.width, tall.height], [1, 160])
        let tiny = ImageBuffer(width: 20, height: 10, channels: 1)
        XCTAssertEqual(tiny.downscaled(toFit: 160), tiny)
    }
}
