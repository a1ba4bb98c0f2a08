import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A batch over a link as real networks are: 20 ms more latency each way and 1 % of the packets lost on
/// both ends of the veth pair between the coordinator's "host" and its workers' (netem, or its emulation
/// on a kernel without it: `NetworkNamespace.impair`). Every item comes back once and no worker is
/// declared dead: TCP retransmits what is lost, and heartbeats arrive late, never too late.
///
/// Throughput against the clean link is a figure, measured by `scripts/bench-netem`, not asserted here.
/// Needs root and `ip netns` (iproute2); skipped, saying why, where that is not possible.
final class LossyLinkTests: NamespacedClusterTestCase {
    func testABatchOverALinkWithLatencyAndLossCompletesEveryItemOnceAndLosesNoWorker() async throws {
        let namespace = try XCTUnwrap(namespace)
        let link = namespace.links[0]
        let impairment: NetworkNamespace.Impairment
        do {
            impairment = try await namespace.impair(link, delay: .milliseconds(20), lossPercent: 1)
        } catch let unavailable as NetworkNamespace.Unavailable {
            throw XCTSkip("this test needs a lossy link: \(unavailable)")
        }
        print("lossy link: \(impairment.rawValue)")
        let origin = try TestHTTPServer(host: link.hostAddress)
        self.origin = origin
        let endpoint = try await harness.startCoordinator(host: link.hostAddress)
        let coordinator = try XCTUnwrap(harness.processes.last)
        for id in ["far-1", "far-2"] {
            try harness.launch(
                id, in: namespace, ["worker", "--slots", "4", "--worker-id", id, "--coordinator", endpoint])
        }
        let joined = try await harness.waitForStatus(endpoint, timeout: .seconds(60)) {
            statusWorkerIDs($0) == ["far-1", "far-2"]
        }
        XCTAssertEqual(
            statusWorkerIDs(joined), ["far-1", "far-2"], "the workers join over the lossy link:\n\(harness.allOutput)")

        let count = 24
        var originals: [[UInt8]] = []
        let urls = try (0..<count).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let bytes = try SyntheticImages.make(width: 320, height: 240, format: format, seed: UInt64(100 + index))
            originals.append(bytes)
            let path = "/lossy/\(index).\(format.fileExtension)"
            origin.serve(path: path, body: bytes, contentType: format.mediaType)
            return origin.url(path)
        }
        let out = harness.scratch.appendingPathComponent("lossy")
        let submit = try harness.launch(
            "submit", ["submit"] + urls + ["--out", out.path, "--json", "--coordinator", endpoint])
        let status = await submit.waitForExit(timeout: .seconds(300))
        XCTAssertEqual(status, 0, "the batch completes over the lossy link:\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(submit.outputText.utf8)) as? [String: Any],
            submit.outputText)
        XCTAssertEqual(document.int("succeeded"), count, submit.outputText)
        let items = document.objects("items")
        XCTAssertEqual(items.map { $0.int("index") }, Array(0..<count), "each item reported once")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: out.path).count, count, "exactly one output per item")
        for item in items {
            let index = item.int("index")
            let path = try XCTUnwrap(item["output"] as? String, "\(item)")
            let (image, _) = try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let expected = try TiltShiftPipeline.process(
                originals[index], parameters: .coreImage, encoding: EncodingOptions())
            let (expectedImage, _) = try ImageCodec.decode(expected.data)
            XCTAssertTrue(image == expectedImage, "item \(index) is the tilt-shift of its own input")
        }

        // No worker was declared dead or lost its connection, and each joined once.
        let after = try await harness.status(endpoint)
        XCTAssertEqual(statusWorkerIDs(after), ["far-1", "far-2"], harness.allOutput)
        let log = coordinator.outputText
        XCTAssertFalse(log.contains("worker declared dead"), log)
        XCTAssertFalse(log.contains("worker unreachable"), log)
        XCTAssertEqual(
            log.split(separator: "\n").filter { $0.hasSuffix("] worker joined") }.count,
            2, log)
    }
}
