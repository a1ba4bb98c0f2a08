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

    override func tearDown() async throws {
        await harness?.stopAll()
        server?.shutdown()
    }
}
