import Foundation
import ShiftworkTestSupport
import XCTest

/// A coordinator pair (`--ha`, docs/failover.md) on two "hosts": each coordinator in a network namespace of its
/// own, with a link to the root namespace (where the workers, the client and the origin run, reaching both) and
/// a veth between the two namespaces alone (`between`), which carries the pair's link (`--ha-listen`/`--ha-peer`),
/// so that a test can cut the pair apart, or a coordinator from everyone.
///
/// Needs root and `ip netns` (iproute2); skipped, saying why, where that is not possible. Every namespace and
/// process a test starts is stopped in `tearDown`, also when the test fails.
class PairOnTwoHostsTestCase: XCTestCase {
    var namespaces: [NetworkNamespace] = []
    var harness: ClusterHarness!
    /// The origin a test serves its images from, shut down with the rest.
    var origin: TestHTTPServer?

    override func setUp() async throws {
        do {
            namespaces.append(try await NetworkNamespace.create(links: 1))
            namespaces.append(try await NetworkNamespace.create(links: 1))
        } catch let unavailable as NetworkNamespace.Unavailable {
            for namespace in namespaces { await namespace.destroy() }
            throw XCTSkip("this test runs each coordinator of a pair in a network namespace of its own: \(unavailable)")
        }
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        origin?.shutdown()  // first: a worker stalled on a download ends at once
        await harness?.stopAll()
        for namespace in namespaces { await namespace.destroy() }
    }

    /// The pair's hosts, the veth between them, the endpoint each serves clients and workers on (its namespace's
    /// address of its link to the root namespace; the namespaces are the test's own, so fixed ports collide with
    /// nothing), and the two coordinators started on them (primary on the first host, backup on the second) with
    /// `--failover-timeout 1`.
    func startPair() async throws -> (
        hosts: (NetworkNamespace, NetworkNamespace), between: NetworkNamespace.PeerLink, endpoints: [String],
        coordinators: [ManagedProcess]
    ) {
        let (hostA, hostB) = (namespaces[0], namespaces[1])
        let between = try await hostA.peerLink(to: hostB)
        let endpoints = [hostA, hostB].map { "tcp://\($0.links[0].namespaceAddress):5570" }
        var coordinators: [ManagedProcess] = []
        for (index, (host, role)) in [(hostA, "primary"), (hostB, "backup")].enumerated() {
            let data = harness.scratch.appendingPathComponent("data-\(role)")
            coordinators.append(
                try harness.launch(
                    "coordinator-\(role)", in: host,
                    [
                        "coordinator", "--listen", endpoints[index], "--insecure", "--data-dir", data.path,
                        "--ha", role, "--ha-listen",
                        "tcp://\(index == 0 ? between.address : between.peerAddress):5580",
                        "--ha-peer", "tcp://\(index == 0 ? between.peerAddress : between.address):5580",
                        "--failover-timeout", "1",
                    ]))
        }
        return ((hostA, hostB), between, endpoints, coordinators)
    }
}
