import Imaging
import Runtime
import XCTest

/// A raised `CancellationFlag` stops each stage (the codecs inside their row loops, in C), so that work
/// running on threads of its own, outside any task, stops when its caller is cancelled.
final class CancellationTests: XCTestCase {
    private func raisedFlag() -> CancellationFlag {
        let flag = CancellationFlag()
        flag.raise()
        return flag
    }

    private func assertCancelled<T>(_ body: @autoclosure () throws -> T, _ what: String, line: UInt = #line) {
        XCTAssertThrowsError(try body(), what, line: line) { error in
            XCTAssertEqual((error as? ImagingError)?.kind, .cancelled, "\(what): \(error)", line: line)
        }
    }

    func testARaisedFlagStopsEveryCodecAndTheFilter() throws {
        let image = TestImages.noise(width: 64, height: 64, channels: 3)
        let jpeg = try ImageCodec.encode(image, as: .jpeg)
        let png = try ImageCodec.encode(image, as: .png)
        assertCancelled(try JPEGCodec.decode(jpeg, cancellation: raisedFlag()), "JPEG decode")
        assertCancelled(try PNGCodec.decode(png, cancellation: raisedFlag()), "PNG decode")
        assertCancelled(try JPEGCodec.encode(image, cancellation: raisedFlag()), "JPEG encode")
        assertCancelled(try PNGCodec.encode(image, cancellation: raisedFlag()), "PNG encode")
        assertCancelled(try TiltShiftFilter.apply(to: image, cancellation: raisedFlag()), "filter")
        assertCancelled(
            try TiltShiftPipeline.process(
                jpeg, parameters: .coreImage, encoding: EncodingOptions(),
                cancellation: raisedFlag()), "pipeline")
    }

    func testAnInterlacedPNGStopsToo() throws {
        let data = try TestImages.fixture("interlaced.png")
        XCTAssertNoThrow(try PNGCodec.decode(data, cancellation: CancellationFlag()))
        assertCancelled(try PNGCodec.decode(data, cancellation: raisedFlag()), "interlaced PNG decode")
    }

    func testAFlagRaisedDuringTheWorkStopsIt() async throws {
        let image = TestImages.noise(width: 1500, height: 1500, channels: 3)
        let flag = CancellationFlag()
        let threads = ComputeThreads(name: "test imaging", count: 1)
        defer { threads.shutdown() }
        let work = Task {
            try await threads.run { _ in
                var rounds = 0
                while true {  // filters until the flag stops it
                    _ = try TiltShiftFilter.apply(to: image, cancellation: flag)
                    rounds += 1
                }
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        flag.raise()
        do {
            try await work.value
            XCTFail("expected the filter to stop")
        } catch let error as ImagingError {
            XCTAssertEqual(error.kind, .cancelled)
        }
    }

    /// The streaming pipeline (JPEG in its planes, PNG through RGB) stops mid-image too, from the C row loops
    /// and the strips of the filter.
    func testAFlagRaisedDuringThePipelineStopsIt() async throws {
        let image = TestImages.noise(width: 2400, height: 2400, channels: 3, seed: 5)
        let threads = ComputeThreads(name: "test imaging", count: 1)
        defer { threads.shutdown() }
        for data in [try JPEGCodec.encode(image, quality: 95), try PNGCodec.encode(image)] {
            let flag = CancellationFlag()
            let work = Task {
                try await threads.run { _ in
                    while true {  // processes until the flag stops it
                        _ = try TiltShiftPipeline.process(
                            data, parameters: .coreImage, encoding: EncodingOptions(),
                            cancellation: flag)
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            flag.raise()
            do {
                try await work.value
                XCTFail("expected the pipeline to stop")
            } catch let error as ImagingError {
                XCTAssertEqual(error.kind, .cancelled)
            }
        }
    }
}
