import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// The cluster's scenarios that matter most with the coordinator and its workers on different "hosts":
/// the coordinator in the root network namespace, workers and clients in a namespace of their own, real
/// TCP between them over a veth pair with private addresses (10.213.x.y), and the images from an HTTP
/// server on that link. (The partition scenario is `NetworkPartitionTests`, the same way.)
///
/// Needs root and `ip netns` (iproute2); skipped, saying why, where that is not possible.
final class AcrossHostsTests: NamespacedClusterTestCase {
    func testAWorkerKilledMidBatchOnAnotherHostLosesNoItem() async throws {
        let namespace = try XCTUnwrap(namespace)
        let link = namespace.links[0]
        let origin = try TestHTTPServer(host: link.hostAddress)
        self.origin = origin
        let endpoint = try await harness.startCoordinator(["--worker-timeout", "2"], host: link.hostAddress)
        let victim = try harness.launch(
            "victim", in: namespace, ["worker", "--slots", "2", "--worker-id", "victim", "--coordinator", endpoint])
        // Four slots: the survivor runs the victim's items and the rest in two rounds of downloads, not four
        // (six slots for eight items still leave both workers busy when the victim is killed).
        try harness.launch(
            "survivor", in: namespace, ["worker", "--slots", "4", "--worker-id", "survivor", "--coordinator", endpoint])
        _ = try await harness.waitForStatus(endpoint) { statusWorkerIDs($0) == ["survivor", "victim"] }

        // Slow downloads (about three seconds each) keep tasks in flight on both workers when one is killed.
        var originals: [[UInt8]] = []
        let urls = try (0..<8).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let bytes = try SyntheticImages.make(width: 120, height: 90, format: format, seed: UInt64(index))
            originals.append(bytes)
            let path = "/hosts/\(index).\(format.fileExtension)"
            origin.serve(
                path: path,
                response: .slow(
                    contentType: format.mediaType, body: bytes, chunkSize: max(1, bytes.count / 10),
                    interval: .milliseconds(300), initialDelay: .zero))
            return origin.url(path)
        }
        let out = harness.scratch.appendingPathComponent("survived")
        let submit = try harness.launch(
            "submit", in: namespace, ["submit"] + urls + ["--out", out.path, "--json", "--coordinator", endpoint])
        let busy = try await harness.waitForStatus(endpoint) { status in
            status.objects("workers").filter { $0.int("running") > 0 }.count == 2
        }
        XCTAssertEqual(busy.objects("workers").filter { $0.int("running") > 0 }.count, 2, harness.allOutput)
        await victim.kill9()

        let status = await submit.waitForExit(timeout: .seconds(90))
        XCTAssertEqual(status, 0, "every item completes after a worker on another host died:\n\(harness.allOutput)")
        let document = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(submit.outputText.utf8)) as? [String: Any],
            submit.outputText)
        XCTAssertEqual(document.int("succeeded"), 8, submit.outputText)
        let items = document.objects("items")
        XCTAssertEqual(items.map { $0.int("index") }, Array(0..<8), "each item reported once: \(items)")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: out.path).count, 8, "exactly one output per item")
        for item in items {
            let index = item.int("index")
            let path = try XCTUnwrap(item["output"] as? String, "\(item)")
            let (image, _) = try ImageCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let expected = try TiltShiftPipeline.process(
                originals[index], parameters: .coreImage, encoding: EncodingOptions())
            let (expectedImage, _) = try ImageCodec.decode(expected.data)
            XCTAssertTrue(image == expectedImage, "item \(index) is the tilt-shift of its own input")
        }
        let cluster = try await harness.status(endpoint)
        XCTAssertEqual(
            statusWorkerIDs(cluster), ["survivor"], "the killed worker is declared dead:\n\(harness.allOutput)")
    }

    /// CurveZMQ with roles between hosts: a coordinator with `--allow-workers`, `--allow-clients` and
    /// `--allow-admins`; from the other host, a worker key serves, a client submits and sees only its own
    /// batch, an administrator sees every batch, and keys without the role are refused, saying which.
    func testCurveZMQRolesBetweenHosts() async throws {
        let namespace = try XCTUnwrap(namespace)
        let link = namespace.links[0]
        let origin = try TestHTTPServer(host: link.hostAddress)
        self.origin = origin
        let names = ["worker", "alice", "bob", "admin"]
        let keys = try await TestKeys(in: harness.scratch, allowed: [], unlisted: names)
        var roleArguments = ["--secret-key", keys.secretKey("coordinator")]
        for (option, members) in [
            ("--allow-workers", ["worker"]), ("--allow-clients", ["alice", "bob"]), ("--allow-admins", ["admin"]),
        ] {
            let directory = harness.scratch.appendingPathComponent(String(option.dropFirst(8)))
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for name in members {
                try FileManager.default.copyItem(
                    at: URL(fileURLWithPath: keys.publicKey(name)),
                    to: directory.appendingPathComponent("\(name).pub"))
            }
            roleArguments += [option, directory.path]
        }
        let coordinator = try harness.launch(
            "coordinator", ["coordinator", "--listen", "tcp://\(link.hostAddress):*"] + roleArguments)
        let listening = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        let endpoint = try XCTUnwrap(listening?.components(separatedBy: "listening on ").last, coordinator.outputText)
            .trimmingCharacters(in: .whitespaces)
        try harness.launch(
            "worker", in: namespace,
            ["worker", "--worker-id", "worker", "--coordinator", endpoint] + keys.peerArguments("worker"))
        let asAdmin = ["--coordinator", endpoint] + keys.peerArguments("admin")
        let joined = try await harness.waitForStatus(endpoint, keyArguments: keys.peerArguments("admin")) {
            statusWorkerIDs($0) == ["worker"]
        }
        XCTAssertEqual(
            statusWorkerIDs(joined), ["worker"], "the worker key joins from the other host:\n\(harness.allOutput)")

        let bytes = try SyntheticImages.make(width: 64, height: 48, format: .png, seed: 5)
        origin.serve(path: "/alice.png", body: bytes, contentType: ImageFormat.png.mediaType)
        let out = harness.scratch.appendingPathComponent("alice-out")
        let submitted = try await harness.run(
            ["submit", origin.url("/alice.png"), "--out", out.path, "--coordinator", endpoint]
                + keys.peerArguments("alice"), in: namespace)
        XCTAssertEqual(submitted.status, 0, harness.allOutput)
        XCTAssertTrue(submitted.output.contains("1 item: 1 succeeded"), submitted.output)
        let match = try XCTUnwrap(
            submitted.output.range(of: #"batch b-[0-9a-f]+"#, options: .regularExpression), submitted.output)
        let batch = String(submitted.output[match].dropFirst("batch ".count))

        let adminSees = try await harness.run(["status", "--json"] + asAdmin, in: namespace)
        XCTAssertEqual(adminSees.status, 0, adminSees.output)
        XCTAssertTrue(adminSees.output.contains(batch), "an administrator sees every batch:\n\(adminSees.output)")
        let bobReads = try await harness.run(
            ["status", batch, "--coordinator", endpoint] + keys.peerArguments("bob"), in: namespace)
        XCTAssertEqual(bobReads.status, 1, bobReads.output)
        XCTAssertTrue(bobReads.output.contains("batch \(batch) was submitted by another client"), bobReads.output)
        let workerSubmits = try await harness.run(
            ["submit", origin.url("/alice.png"), "--out", out.path, "--coordinator", endpoint]
                + keys.peerArguments("worker"), in: namespace)
        XCTAssertEqual(workerSubmits.status, 1, workerSubmits.output)
        XCTAssertTrue(workerSubmits.output.contains("submitting a batch needs the client role"), workerSubmits.output)
        let impostor = try harness.launch(
            "impostor", in: namespace,
            ["worker", "--worker-id", "impostor", "--coordinator", endpoint]
                + keys.peerArguments("alice"))
        let impostorStatus = await impostor.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(impostorStatus, 1, impostor.outputText)
        XCTAssertTrue(impostor.outputText.contains("needs the worker role"), impostor.outputText)
    }
}
