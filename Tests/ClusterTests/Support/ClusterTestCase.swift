import Imaging
import ShiftworkTestSupport
import XCTest

/// A test of `shiftwork` processes: each test gets a `ClusterHarness` (whose processes are all
/// stopped afterwards) and an HTTP origin on 127.0.0.1 for the images.
class ClusterTestCase: XCTestCase {
    var harness: ClusterHarness!
    var server: TestHTTPServer!

    override func setUp() async throws {
        harness = try ClusterHarness()
        server = try TestHTTPServer()
    }

    /// The origin first: its shutdown ends the stalled and slow answers, so that a worker still downloading
    /// one has nothing left to drain when it is stopped, and exits at once instead of after its stop's grace.
    override func tearDown() async throws {
        server?.shutdown()
        await harness?.stopAll()
    }

    /// Serves one synthetic image at `/NAME`; returns its URL and bytes.
    func serveImage(
        _ name: String, format: ImageFormat = .png, width: Int = 160, height: Int = 120,
        seed: UInt64 = 11
    ) throws -> (url: String, bytes: [UInt8]) {
        let bytes = try SyntheticImages.make(width: width, height: height, format: format, seed: seed)
        server.serve(path: "/\(name)", body: bytes, contentType: format.mediaType)
        return (server.url("/\(name)"), bytes)
    }
}
