import ShiftworkTestSupport
import XCTest

/// A test whose workers (and clients) run on another "host": a network namespace of its own with one veth
/// link to the root namespace, where the coordinator runs. Sets up the namespace and a `ClusterHarness`
/// before each test, and stops every process, the origin server a test keeps in `origin`, and the namespace
/// after it (also when it failed). Needs root and `ip netns` (iproute2); skipped, saying why, where that is
/// not possible.
class NamespacedClusterTestCase: XCTestCase {
    /// The workers' "host", with `links[0]` to the root namespace.
    var namespace: NetworkNamespace?
    var harness: ClusterHarness!
    /// An HTTP origin a test started, shut down after it.
    var origin: TestHTTPServer?

    override func setUp() async throws {
        do {
            namespace = try await NetworkNamespace.create(links: 1)
        } catch let unavailable as NetworkNamespace.Unavailable {
            throw XCTSkip("this test runs workers in a network namespace of its own: \(unavailable)")
        }
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        origin?.shutdown()  // first: it ends stalled downloads, which a stopped worker would drain (ClusterTestCase)
        await harness?.stopAll()
        await namespace?.destroy()
    }
}
