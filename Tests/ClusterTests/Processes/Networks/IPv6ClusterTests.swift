import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// The cluster over IPv6 (issue #27): every ZeroMQ socket sets `ZMQ_IPV6`, so a coordinator listens on an
/// IPv6 address (`tcp://[::1]:5570`), workers and clients connect to one or to a name that resolves to
/// one, and a socket bound to `tcp://*:PORT` takes IPv4 and IPv6 peers alike (dual stack).
final class IPv6ClusterTests: ClusterTestCase {
    private var namespace: NetworkNamespace?
    private var origin: TestHTTPServer?

    override func tearDown() async throws {
        await harness?.stopAll()
        origin?.shutdown()
        await namespace?.destroy()
        try await super.tearDown()
    }

    /// A coordinator, a worker and `submit`, all on `[::1]`, with CurveZMQ.
    func testACoordinatorAWorkerAndSubmitOnIPv6LoopbackWithCurveZMQ() async throws {
        let keys = try await TestKeys(in: harness.scratch, allowed: ["worker", "client"])
        let endpoint = try await harness.startCoordinator(host: "::1", keys: keys)
        XCTAssertTrue(endpoint.hasPrefix("tcp://[::1]:"), "the coordinator listens on [::1]: \(endpoint)")
        try harness.startWorker("worker", endpoint: endpoint, keys: keys)
        let joined = try await harness.waitForStatus(endpoint, keyArguments: keys.peerArguments("client")) {
            statusWorkerIDs($0) == ["worker"]
        }
        XCTAssertEqual(statusWorkerIDs(joined), ["worker"], "the worker joins over IPv6:\n\(harness.allOutput)")

        let images = try (0..<3).map { try serveImage("v6-\($0).png", width: 96, height: 64, seed: UInt64($0)) }
        let out = harness.scratch.appendingPathComponent("v6")
        let (status, output) = try await harness.run(
            ["submit"] + images.map(\.url) + ["--out", out.path, "--coordinator", endpoint]
                + keys.peerArguments("client"))
        XCTAssertEqual(status, 0, harness.allOutput)
        XCTAssertTrue(output.contains("3 items: 3 succeeded, 0 failed"), output)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 3)
    }

    /// A bracketed IPv6 endpoint that is malformed, or on an address this host does not have, is refused
    /// at start with the endpoint named, not taken for an IPv4 one.
    func testAnIPv6EndpointThisHostDoesNotHaveIsRefusedNamingIt() async throws {
        let (status, output) = try await harness.run(
            ["coordinator", "--listen", "tcp://[fd00:5713:ffff:ffff::99]:5570", "--insecure"], timeout: .seconds(30))
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("cannot listen on tcp://[fd00:5713:ffff:ffff::99]:5570"), output)
        XCTAssertTrue(output.contains("Choose another endpoint with --listen"), output)
    }

    /// Dual stack across "hosts": a coordinator bound to `tcp://*:PORT`, workers in a network namespace
    /// reaching it over IPv4, over IPv6 (fd00::/8 addresses on a veth pair) and by a name with only an
    /// IPv6 address (AAAA, from a DNS server of the test's own), `submit` over IPv6 from the namespace, and
    /// the images from an HTTP server on the link's IPv6 address.
    func testDualStackWorkersOverIPv4IPv6AndANameAcrossNamespaces() async throws {
        do {
            namespace = try await NetworkNamespace.create(links: 1)
        } catch let unavailable as NetworkNamespace.Unavailable {
            throw XCTSkip("this test runs workers in a network namespace of its own: \(unavailable)")
        }
        let namespace = try XCTUnwrap(namespace)
        let link = namespace.links[0]
        let name = "coordinator-v6.shiftwork.test"
        _ = try await TestNameserver.start(
            on: link.hostAddress6, records: [name: [link.hostAddress6]], harness: harness)
        try namespace.useNameserver(link.hostAddress6)
        let origin = try TestHTTPServer(host: link.hostAddress6)
        self.origin = origin

        let bound = try await harness.startCoordinator(["--worker-timeout", "3"], host: "*")
        let port = try XCTUnwrap(bound.split(separator: ":").last, bound)
        let overIPv4 = "tcp://\(link.hostAddress):\(port)"
        let overIPv6 = "tcp://[\(link.hostAddress6)]:\(port)"
        for (id, endpoint) in [("over-ipv4", overIPv4), ("over-ipv6", overIPv6), ("by-name", "tcp://\(name):\(port)")] {
            try harness.launch(
                id, in: namespace, ["worker", "--slots", "2", "--worker-id", id, "--coordinator", endpoint])
        }
        let local = "tcp://127.0.0.1:\(port)"
        let joined = try await harness.waitForStatus(local) { statusWorkerIDs($0).count == 3 }
        XCTAssertEqual(
            statusWorkerIDs(joined), ["by-name", "over-ipv4", "over-ipv6"],
            "every worker joins the dual-stack socket:\n\(harness.allOutput)")

        var originals: [[UInt8]] = []
        let urls = try (0..<6).map { index in
            let bytes = try SyntheticImages.make(width: 96, height: 64, format: .png, seed: UInt64(index))
            originals.append(bytes)
            origin.serve(path: "/v6/\(index).png", body: bytes, contentType: ImageFormat.png.mediaType)
            return origin.url("/v6/\(index).png")
        }
        XCTAssertTrue(urls[0].hasPrefix("http://[fd00:5713:"), urls[0])
        let out = harness.scratch.appendingPathComponent("dual-stack")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--json", "--coordinator", overIPv6], in: namespace)
        XCTAssertEqual(status, 0, harness.allOutput)
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        XCTAssertEqual(document.int("succeeded"), 6, output)
        let items = document.objects("items")
        XCTAssertEqual(items.map { $0.int("index") }, Array(0..<6), "each item reported once: \(items)")
        for item in items {
            let path = try XCTUnwrap(item["output"] as? String, "\(item)")
            let (image, _) = try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let (input, _) = try ImageCodec.decode(originals[item.int("index")])
            XCTAssertEqual(image.width, input.width, path)
        }
        let after = try await harness.status(local)
        XCTAssertEqual(
            statusWorkerIDs(after), ["by-name", "over-ipv4", "over-ipv6"], "no worker was lost:\n\(harness.allOutput)")
    }
}
