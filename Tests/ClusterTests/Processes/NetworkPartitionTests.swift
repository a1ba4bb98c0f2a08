import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// A worker on another "host" (a network namespace of its own) is cut off from the coordinator in the
/// middle of a batch while it keeps running: its tasks finish elsewhere, the results it sends when it
/// comes back are ignored, and it registers again.
///
/// Needs root and `ip netns` (iproute2); skipped, saying why, where that is not possible.
final class NetworkPartitionTests: XCTestCase {
    private var namespace: NetworkNamespace?
    private var harness: ClusterHarness?
    private var server: TestHTTPServer?

    override func setUp() async throws {
        do {
            namespace = try await NetworkNamespace.create(links: 2)
        } catch let unavailable as NetworkNamespace.Unavailable {
            throw XCTSkip("this test runs a worker in a network namespace of its own: \(unavailable)")
        }
        harness = try ClusterHarness()
    }

    override func tearDown() async throws {
        // The processes first (the worker inside the namespace too), then the origin, then the namespace.
        await harness?.stopAll()
        server?.shutdown()
        await namespace?.destroy()
    }

    func testAWorkerCutOffMidBatchLosesNothingItsStaleResultsAreIgnoredAndItRegistersAgain() async throws {
        let namespace = try XCTUnwrap(namespace)
        let harness = try XCTUnwrap(harness)
        // Two links to the namespace: the worker reaches the coordinator over `control`, which is cut, and
        // the origin over `data`, which stays up, so that it finishes its downloads while it is cut off.
        let control = namespace.links[0]
        let data = namespace.links[1]
        let server = try TestHTTPServer(host: data.hostAddress)
        self.server = server

        let endpoint = try await harness.startCoordinator(["--worker-timeout", "2"], host: control.hostAddress)
        let (ip, arguments) = namespace.exec([
            ShiftworkBinary.url.path, "worker", "--slots", "2", "--worker-id", "cut-off", "--log-level", "debug",
            "--coordinator", endpoint,
        ])
        let cutOff = try harness.launch("cut-off", executable: ip, arguments)
        let joined = try await harness.waitForStatus(endpoint) { workerIDs($0) == ["cut-off"] }
        XCTAssertEqual(workerIDs(joined), ["cut-off"], "the worker in the namespace joins:\n\(harness.allOutput)")
        try harness.startWorker("steady", endpoint: endpoint, slots: 2)
        _ = try await harness.waitForStatus(endpoint) { workerIDs($0) == ["cut-off", "steady"] }

        // Four items. The first request for each image takes about 6 s, so each worker holds its two
        // downloads long enough to be cut in the middle of them; a download that is requeued is served at once.
        var originals: [[UInt8]] = []
        let urls = try (0..<4).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let bytes = try SyntheticImages.make(width: 120, height: 90, format: format, seed: UInt64(index))
            originals.append(bytes)
            let path = "/partition/image-\(index).\(format.fileExtension)"
            let slow = TestHTTPServer.Response.slow(
                contentType: format.mediaType, body: bytes, chunkSize: max(1, bytes.count / 60),
                interval: .milliseconds(100), initialDelay: .zero)
            server.serve(
                path: path,
                response: .sequence(
                    [slow], then: .content(status: .ok, contentType: format.mediaType, body: bytes)))
            return server.url(path)
        }
        let out = harness.scratch.appendingPathComponent("partition")
        let submit = try harness.launch(
            "submit", ["submit"] + urls + ["--out", out.path, "--json", "--coordinator", endpoint])

        let busy = try await harness.waitForStatus(endpoint) {
            running($0, "cut-off") == 2 && running($0, "steady") == 2
        }
        let held = running(busy, "cut-off")
        XCTAssertEqual(held, 2, "the worker holds two running downloads before the cut:\n\(harness.allOutput)")

        // Cut.
        try await namespace.setLink(control, up: false)
        let afterCut = try await harness.waitForStatus(endpoint) { workerIDs($0) == ["steady"] }
        XCTAssertEqual(
            workerIDs(afterCut), ["steady"], "the coordinator declares the cut-off worker dead:\n\(harness.allOutput)")

        // The batch completes on the other worker: every item exactly once, each the tilt-shift of its input.
        let submitStatus = await submit.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(submitStatus, 0, "every item completes without the cut-off worker:\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(submit.outputText.utf8)) as? [String: Any],
            "submit --json prints one document:\n\(submit.outputText)")
        XCTAssertEqual(document.int("succeeded"), 4, submit.outputText)
        let items = document.objects("items")
        XCTAssertEqual(items.map { $0.int("index") }, [0, 1, 2, 3], "each item reported once: \(items)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        XCTAssertEqual(files.count, 4, "exactly one output per item: \(files)")
        for item in items {
            let index = item.int("index")
            let path = try XCTUnwrap(item["output"] as? String, "item \(index) has no output: \(item)")
            let (image, _) = try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let expected = try TiltShiftPipeline.process(
                originals[index], parameters: .coreImage, encoding: EncodingOptions())
            let (expectedImage, _) = try ImageCodec.decode(expected.data)
            XCTAssertTrue(image == expectedImage, "item \(index) is the tilt-shift of its own input")
        }

        // Cut off, the worker still finished the downloads it held and sent their (attempt 1) results.
        let sent = await waitForLines(in: cutOff, count: held) { line in
            line.contains("] task succeeded, result sent") && line.contains(" attempt=1 ")
                && line.contains(" kind=download ")
        }
        XCTAssertEqual(sent, held, "the cut-off worker finishes its downloads:\n\(cutOff.outputText)")
        let beforeRestore = try await harness.status(endpoint)
        XCTAssertEqual(beforeRestore.int("completed_tasks"), 8, "a download and a tilt-shift per item")

        // Restore: the stale results arrive and are ignored, and the worker registers again.
        try await namespace.setLink(control, up: true)
        let dropped = beforeRestore.int("dropped_messages")
        let restored = try await harness.waitForStatus(endpoint, timeout: .seconds(60)) { status in
            workerIDs(status) == ["cut-off", "steady"] && status.int("dropped_messages") >= dropped + held
        }
        XCTAssertEqual(workerIDs(restored), ["cut-off", "steady"], "the worker registers again:\n\(harness.allOutput)")
        XCTAssertGreaterThanOrEqual(
            restored.int("dropped_messages"), dropped + held,
            "its stale results are counted as dropped:\n\(harness.allOutput)")
        XCTAssertEqual(restored.int("completed_tasks"), 8, "no stale result is delivered:\n\(harness.allOutput)")
        XCTAssertEqual(restored.int("running_tasks"), 0)
        XCTAssertEqual(restored.int("queued_tasks"), 0)
        let batchID = try XCTUnwrap(document["batch"] as? String)
        let batch = try await harness.status(endpoint, batch: batchID)
        let states = batch.objects("batches").first?.objects("item_states").map { $0["state"] as? String } ?? []
        XCTAssertEqual(states, Array(repeating: "succeeded", count: 4))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).count, 4)
        // Every heartbeat sent while cut off is refused at once when the link comes back; one hello answers
        // them all (each further hello would make the coordinator requeue what it had just sent).
        let registration: (Substring) -> Bool = { $0.hasSuffix("] registered with the coordinator") }
        let join: (Substring) -> Bool = { $0.contains(" worker=cut-off ") && $0.hasSuffix("] worker joined") }
        let coordinator = try XCTUnwrap(harness.processes.first)
        _ = await waitForLines(in: cutOff, count: 2, where: registration)
        _ = await waitForLines(in: coordinator, count: 2, where: join)
        _ = try await harness.status(endpoint)
        XCTAssertTrue(cutOff.outputText.contains("the coordinator does not know this worker"), cutOff.outputText)
        XCTAssertEqual(
            cutOff.outputText.split(separator: "\n").filter(registration).count, 2,
            "it registers once more, not once per refused heartbeat:\n\(cutOff.outputText)")
        XCTAssertEqual(coordinator.outputText.split(separator: "\n").filter(join).count, 2, coordinator.outputText)
    }

    /// Waits (at most 30 s) until `process` has written `count` lines matching `predicate`; returns how
    /// many it has written.
    private func waitForLines(in process: ManagedProcess, count: Int, where predicate: (Substring) -> Bool) async -> Int
    {
        let deadline = ContinuousClock.now + .seconds(30)
        var found = 0
        while ContinuousClock.now < deadline {
            found = process.outputText.split(separator: "\n").filter(predicate).count
            if found >= count || !process.isRunning { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return found
    }
}

/// The IDs of the workers in a status reply, sorted.
private func workerIDs(_ status: [String: Any]) -> [String] {
    status.objects("workers").compactMap { $0["id"] as? String }.sorted()
}

/// How many tasks the worker `id` runs, per a status reply (-1 when it is not listed).
private func running(_ status: [String: Any], _ id: String) -> Int {
    status.objects("workers").first { $0["id"] as? String == id }?.int("running") ?? -1
}
