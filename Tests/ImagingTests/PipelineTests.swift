import XCTest

@testable import Imaging

final class PipelineTests: XCTestCase {
    func testJPEGStaysJPEGByDefault() throws {
        let data = try TestImages.fixture("photo.jpg")
        let result = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(result.format, .jpeg)
        XCTAssertEqual(ImageFormat(sniffing: result.data), .jpeg)
        let input = try ImageCodec.decode(data).image
        XCTAssertEqual(result.width, input.width)
        XCTAssertEqual(result.height, input.height)
    }

    func testPNGStaysPNGAndFormatCanBeChosen() throws {
        let data = try TestImages.fixture("photo.png")
        let png = try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        XCTAssertEqual(png.format, .png)
        let jpeg = try TiltShiftPipeline.process(
            data, parameters: .coreImage, encoding: EncodingOptions(format: .jpeg, jpegQuality: 80))
        XCTAssertEqual(jpeg.format, .jpeg)
        XCTAssertEqual(ImageFormat(sniffing: jpeg.data), .jpeg)
    }

    func testBadInputsGiveTheirOwnErrors() throws {
        let cases: [(String, ImagingError.Kind)] = [
            ("truncated.jpg", .decode), ("corrupt.png", .decode), ("not-an-image.html", .decode),
        ]
        for (name, kind) in cases {
            XCTAssertThrowsError(
                try TiltShiftPipeline.process(
                    TestImages.fixture(name), parameters: .coreImage, encoding: EncodingOptions())
            ) { error in
                XCTAssertEqual((error as? ImagingError)?.kind, kind, name)
            }
        }
        XCTAssertThrowsError(
            try TiltShiftPipeline.process(
                TestImages.fixture("photo.jpg"), parameters: .coreImage,
                encoding: EncodingOptions(jpegQuality: 0))
        ) { error in
            XCTAssertEqual((error as? ImagingError)?.message, "JPEG quality must be between 1 and 100 (got 0)")
        }
    }

    func testPixelLimitNamesTheLimit() throws {
        let data = try TestImages.fixture("photo.jpg")
        XCTAssertThrowsError(
            try TiltShiftPipeline.process(
                data, parameters: .coreImage, encoding: EncodingOptions(),
                limits: ImageLimits(maxPixels: 10_000))
        ) { error in
            let error = error as? ImagingError
            XCTAssertEqual(error?.kind, .limit)
            XCTAssertTrue(
                error?.message.contains("over the limit of 0.01 megapixels") ?? false, "\(String(describing: error))")
            XCTAssertTrue(error?.message.contains("--max-megapixels") ?? false)
        }
    }

    func testCancelledBeforeStarting() async throws {
        let data = try TestImages.fixture("photo.jpg")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try TiltShiftPipeline.process(data, parameters: .coreImage, encoding: EncodingOptions())
        }
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, .cancelled)
        }
    }
}
