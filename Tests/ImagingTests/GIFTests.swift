import XCTest

@testable import Imaging

/// GIF input (giflib): the first frame decodes to its palette's exact colours (interlaced or not), a transparent
/// index gives RGBA, an animation's first frame is read and the result says so, the output is JPEG unless chosen,
/// and bad input fails with a message.
final class GIFTests: XCTestCase {
    private typealias S = InputFormatSamples
    private let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 250, 250, 250]

    private func indices(width: Int, height: Int) -> [UInt8] {
        (0..<(width * height)).map { UInt8(($0 * 7 + $0 / width) % 4) }
    }

    private func expected(_ indices: [UInt8]) -> [UInt8] {
        indices.flatMap { Array(palette[3 * Int($0)..<3 * Int($0) + 3]) }
    }

    func testTheFirstFrameDecodesExactlyInterlacedOrNot() throws {
        let pixels = indices(width: 23, height: 19)
        for interlaced in [false, true] {
            let data = try S.gif(pixels, width: 23, height: 19, palette: palette, interlaced: interlaced)
            XCTAssertEqual(ImageFormat(sniffing: data), .gif)
            let (image, format) = try ImageCodec.decode(data)
            XCTAssertEqual(format, .gif)
            XCTAssertEqual([image.width, image.height, image.channels], [23, 19, 3])
            XCTAssertEqual(image.pixels, expected(pixels), "interlaced \(interlaced)")
        }
    }

    func testATransparentIndexGivesRGBA() throws {
        let pixels = indices(width: 8, height: 4)
        let image = try ImageCodec.decode(try S.gif(pixels, width: 8, height: 4, palette: palette, transparent: 3))
            .image
        XCTAssertEqual(image.channels, 4)
        for (i, index) in pixels.enumerated() {
            let expectedPixel = index == 3 ? [0, 0, 0, 0] : Array(palette[3 * Int(index)..<3 * Int(index) + 3]) + [255]
            XCTAssertEqual(Array(image.pixels[4 * i..<4 * i + 4]), expectedPixel, "pixel \(i)")
        }
    }

    func testAnAnimationsFirstFrameIsReadAndWrittenAsJPEG() throws {
        let pixels = indices(width: 32, height: 24)
        let data = try S.gif(pixels, width: 32, height: 24, palette: palette, frames: 3)
        let result = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(result.format, .jpeg)
        XCTAssertEqual(ImageFormat(sniffing: result.data), .jpeg)
        XCTAssertTrue(
            result.warnings.contains("the GIF is animated: only its first frame was read"), "\(result.warnings)")
        XCTAssertTrue(result.warnings.contains { $0.hasPrefix("GIF input written as JPEG") }, "\(result.warnings)")
        let single = try TiltShiftPipeline.process(
            try S.gif(pixels, width: 32, height: 24, palette: palette),
            parameters: .coreImage, encoding: EncodingOptions(format: .png))
        XCTAssertEqual(single.warnings, [], "one frame, a chosen format: nothing to say")
    }

    func testBadGIFsFailWithAMessage() throws {
        let data = try S.gif(indices(width: 64, height: 64), width: 64, height: 64, palette: palette)
        XCTAssertThrowsError(try ImageCodec.decode(Array(data.prefix(data.count - 40)))) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .decode, "\(error)")
            XCTAssertTrue("\(error)".contains("GIF"), "\(error)")
        }
        // A logical screen of 65535 × 65535: refused by the limit before the picture is allocated.
        var lying = data
        lying.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try ImageCodec.decode(lying)) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .limit, "\(error)")
        }
        for offset in stride(from: 6, to: data.count, by: 7) {
            var corrupt = data
            corrupt[offset] ^= 0x5A
            do {
                _ = try ImageCodec.decode(corrupt)
            } catch let error as ImagingError {
                XCTAssertTrue([.decode, .limit].contains(error.kind), "\(error)")
            }
        }
    }
}
