import Cluster
import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

@testable import Cluster

/// The pair's faults (issue #31, "Bad input and faults") met as a user meets them: real coordinator processes
/// on loopback, and where a peer must say what no `shiftwork` process of this version says, a peer the test
/// plays on the pair's real link (`PairLinkPeer`). Each refusal is said in the log and to `status`, counted in
/// the metrics where it is a message, and leaves both data directories byte for byte as they were.
final class PairFaultProcessTests: ClusterTestCase {
    /// Starts a coordinator of a pair and waits until it listens (its journal is open and its link bound
    /// then); `metrics` adds `--metrics-listen` on a free port.
    private func startCoordinator(
        _ name: String, role: String, data: URL, service: String, haListen: String, haPeer: String,
        security: [String] = ["--insecure"], extra: [String] = []
    ) async throws -> ManagedProcess {
        let process = try harness.launch(
            name,
            ["coordinator", "--listen", service] + security + [
                "--data-dir", data.path, "--ha", role,
                "--ha-listen", haListen, "--ha-peer", haPeer, "--failover-timeout", "1.5",
            ] + extra)
        let listening = await process.waitForLine { $0.contains("coordinator listening on") }
        XCTAssertNotNil(listening, process.outputText)
        return process
    }

    private func loopbackEndpoint() throws -> String { "tcp://127.0.0.1:\(try freeLoopbackPort())" }

    private func data(_ name: String) -> URL { harness.scratch.appendingPathComponent(name) }

    /// The URL of the metrics page a coordinator started with `--metrics-listen 127.0.0.1:0` printed.
    private func metricsURL(_ process: ManagedProcess) async throws -> String {
        let line = await process.waitForLine { $0.hasPrefix("metrics on ") }
        return try XCTUnwrap(line?.components(separatedBy: "metrics on ").last, process.outputText)
    }

    /// The value of one sample of a Prometheus page (`nil` when it is not there).
    private func sample(_ name: String, in page: String) -> Double? {
        for line in page.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    /// Reads the metrics page at `url` until the sample `name` is at least `value`; returns that page. Throws,
    /// with the last page, when it never is.
    @discardableResult
    private func waitForSample(_ name: String, atLeast value: Double, at url: String) async throws -> String {
        var page = ""
        for _ in 0..<300 {
            page = try await TestHTTPClient.get(url).text
            if let found = sample(name, in: page), found >= value { return page }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("\(name) never reached \(value) at \(url); the last page:\n\(page)\n\(harness.allOutput)")
    }

    /// `shiftwork status` (and with `--json`) against `endpoint`: what it printed, both ways, when refused.
    private func refusedStatus(_ endpoint: String) async throws -> [String] {
        var said: [String] = []
        for json in [false, true] {
            let (status, output) = try await harness.run(
                ["status", "--coordinator", endpoint] + (json ? ["--json"] : []))
            XCTAssertNotEqual(status, 0, "a coordinator of a pair that is not active answered status: \(output)")
            said.append(output)
        }
        return said
    }

    /// Submits a no-op batch to `endpoint`, asking again while a coordinator of a pair refuses it (it takes over
    /// alone once its peer has been silent for the failover timeout); returns the batch's ID.
    private func submitUntilAccepted(
        _ endpoint: String, items: Int, socketOptions: SocketOptions = SocketOptions()
    ) async throws -> String {
        var refusals: [String] = []
        for _ in 0..<200 {
            let batch = SubmitBatch(
                requestID: "", items: (0..<items).map { BatchItem(source: "noop-\($0)") }, kind: .noop)
            do {
                let accepted = try await ClusterClient.withConnection(
                    endpoint: endpoint, responseTimeout: .seconds(30), socketOptions: socketOptions
                ) { client -> String? in
                    for try await event in await client.submit(batch) {
                        if case .accepted(let batchID, _) = event { return batchID }
                    }
                    return nil
                }
                if let accepted { return accepted }
            } catch {
                refusals.append("\(error)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("no batch accepted at \(endpoint): \(refusals.suffix(3))\n\(harness.allOutput)")
    }

    // MARK: - Another cluster

    func testTwoCoordinatorsOfDifferentClustersRefuseEachOtherSayingWhichAndChangeNothing() async throws {
        let (serviceA, serviceB) = (try loopbackEndpoint(), try loopbackEndpoint())
        let (linkA, linkB) = (try freeLoopbackPort(), try freeLoopbackPort())
        // Each reaches the other through a relay that holds everything until both data directories were read.
        let toA = try RecordingTCPRelay(upstreamPort: linkA)
        let toB = try RecordingTCPRelay(upstreamPort: linkB)
        defer {
            toA.stop()
            toB.stop()
        }
        toA.holding = true
        toB.holding = true
        let a = try await startCoordinator(
            "coordinator-red", role: "primary", data: data("data-a"), service: serviceA,
            haListen: "tcp://127.0.0.1:\(linkA)", haPeer: toB.endpoint,
            extra: ["--cluster", "red", "--metrics-listen", "127.0.0.1:0"])
        let b = try await startCoordinator(
            "coordinator-blue", role: "backup", data: data("data-b"), service: serviceB,
            haListen: "tcp://127.0.0.1:\(linkB)", haPeer: toA.endpoint,
            extra: ["--cluster", "blue", "--metrics-listen", "127.0.0.1:0"])
        let before = [try DataDirectoryContents(data("data-a")), try DataDirectoryContents(data("data-b"))]
        XCTAssertFalse(before[0].journal.isEmpty, "the journal is written at the start")
        toA.holding = false
        toB.holding = false

        for (process, own, other) in [(a, "red", "blue"), (b, "blue", "red")] {
            let said = await process.waitForLine {
                $0.contains(
                    "refused the pair's peer: the peer belongs to another cluster ('\(other)'; this one is '\(own)')")
            }
            XCTAssertNotNil(said, process.outputText)
        }
        for endpoint in [serviceA, serviceB] {
            for output in try await refusedStatus(endpoint) {
                XCTAssertTrue(output.contains("the peer belongs to another cluster"), output)
            }
        }
        // Every announcement is refused (counted): wait for several, and still neither followed the other.
        for process in [a, b] {
            let metrics = try await metricsURL(process)
            try await waitForSample(#"shiftwork_pair_refused_total{what="peer"}"#, atLeast: 3, at: metrics)
            XCTAssertFalse(process.outputText.contains("now the active one"), process.outputText)
            XCTAssertFalse(process.outputText.contains("now the passive one"), process.outputText)
        }
        XCTAssertEqual(try DataDirectoryContents(data("data-a")), before[0], "red's data changed")
        XCTAssertEqual(try DataDirectoryContents(data("data-b")), before[1], "blue's data changed")
    }

    // MARK: - Another major version, another pair version

    /// The pair runs with CurveZMQ (one key pair for both, as docs/failover.md runs it); the test's peer holds
    /// that key pair, so it passes the handshake as the pair's peer would, and is refused for what it says.
    func testAPeerOfAnotherMajorVersionOrPairVersionIsRefusedCountedAndChangesNothing() async throws {
        let keys = try await TestKeys(in: harness.scratch, allowed: ["client"])
        let security = ["--secret-key", keys.secretKey("coordinator"), "--allow-keys", keys.allowList.path]
        let pairKeys = try CurveKeyPair.load(secretKeyFile: keys.secretKey("coordinator"))
        var clientOptions = SocketOptions()
        clientOptions.curve = .client(
            try CurveKeyPair.load(secretKeyFile: keys.secretKey("client")), serverKey: pairKeys.publicKey)
        let services = [try loopbackEndpoint(), try loopbackEndpoint()]
        let links = [try loopbackEndpoint(), try loopbackEndpoint()]
        let a = try await startCoordinator(
            "coordinator-a", role: "primary", data: data("data-a"), service: services[0], haListen: links[0],
            haPeer: links[1], security: security, extra: ["--metrics-listen", "127.0.0.1:0"])
        _ = try await startCoordinator(
            "coordinator-b", role: "backup", data: data("data-b"), service: services[1], haListen: links[1],
            haPeer: links[0], security: security)
        let metrics = try await metricsURL(a)
        let settled = await a.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(settled, harness.allOutput)
        let before = [try DataDirectoryContents(data("data-a")), try DataDirectoryContents(data("data-b"))]

        let context = try MessagingContext()
        let peer = try await PairLinkPeer.open(connectingTo: links[0], keyPair: pairKeys, context: context)
        do {
            // Each claims to be an active coordinator far ahead: were it heard, A would step down for it.
            let ahead = JournalPosition(term: 1_000, records: 1_000)
            var envelope = WireCodec.encode(
                .pairAnnouncement(
                    WirePairAnnouncement(
                        hello: PairLinkPeer.hello(major: WireProtocol.major + 1), role: .backup, state: .active,
                        position: ahead.wire)))
            envelope[1] = UInt8(WireProtocol.major + 1)  // the envelope of another major version
            peer.sendRaw(envelope)
            peer.announce(.active, role: .backup, at: ahead, hello: PairLinkPeer.hello(major: WireProtocol.major + 1))
            peer.announce(.active, role: .backup, at: ahead, hello: PairLinkPeer.hello(pairVersion: 2))

            var page = try await waitForSample(#"shiftwork_pair_refused_total{what="peer"}"#, atLeast: 3, at: metrics)
            // Nothing else comes from the test's peer: the count stays at 3 (B's announcements are heard).
            try await Task.sleep(for: .seconds(1))
            page = try await TestHTTPClient.get(metrics).text
            XCTAssertEqual(sample(#"shiftwork_pair_refused_total{what="peer"}"#, in: page), 3, page)
            XCTAssertEqual(sample(#"shiftwork_pair_refused_total{what="stream"}"#, in: page), 0, page)
            XCTAssertEqual(sample("shiftwork_pair_active", in: page), 1, page)
            let major =
                "the peer speaks major version \(WireProtocol.major + 1) of the protocol, this one \(WireProtocol.major)"
            XCTAssertEqual(a.outputText.components(separatedBy: major).count - 1, 2, a.outputText)
            XCTAssertTrue(a.outputText.contains("the peer speaks version 2 of the pair's protocol"), a.outputText)
            XCTAssertFalse(a.outputText.contains("now the passive one"), a.outputText)
        } catch {
            await peer.close()
            throw error
        }
        await peer.close()
        XCTAssertEqual(try DataDirectoryContents(data("data-a")), before[0], "the active one's data changed")
        XCTAssertEqual(try DataDirectoryContents(data("data-b")), before[1], "the passive one's data changed")

        // It serves as before: still the active one, in step with its peer.
        let status = try await harness.status(services[0], keyArguments: keys.peerArguments("client"))
        let pair = try XCTUnwrap(status["pair"] as? [String: Any], "\(status)")
        XCTAssertEqual(pair["state"] as? String, "active", "\(pair)")
        XCTAssertEqual(pair["peer_state"] as? String, "passive", "\(pair)")
        _ = try await submitUntilAccepted(services[0], items: 2, socketOptions: clientOptions)
    }

    // MARK: - A newer journal that would be replaced

    /// A data directory copied at an older point, brought up as the active one, and the newer one started
    /// as its peer: the newer one refuses to follow (log, `status`), and neither journal changes.
    func testANewerJournalIsNotReplacedByAnOlderActivePeer() async throws {
        let (serviceA, serviceOld) = (try loopbackEndpoint(), try loopbackEndpoint())
        let (linkA, linkOld) = (try freeLoopbackPort(), try freeLoopbackPort())
        let nobody = try loopbackEndpoint()

        // A runs alone (its peer never came): it takes over alone and accepts a batch, twice, stopped between.
        var alone = try await startCoordinator(
            "coordinator-a-1", role: "primary", data: data("data-a"), service: serviceA,
            haListen: "tcp://127.0.0.1:\(linkA)", haPeer: nobody)
        _ = try await submitUntilAccepted(serviceA, items: 2)
        _ = await alone.stop()
        try FileManager.default.copyItem(at: data("data-a"), to: data("data-old"))
        alone = try await startCoordinator(
            "coordinator-a-2", role: "primary", data: data("data-a"), service: serviceA,
            haListen: "tcp://127.0.0.1:\(linkA)", haPeer: nobody)
        _ = try await submitUntilAccepted(serviceA, items: 3)
        _ = await alone.stop()

        // The older copy, started as the backup, takes over alone too (a term of the backup's, older than A's).
        let relayToA = try RecordingTCPRelay(upstreamPort: linkA)
        defer { relayToA.stop() }
        relayToA.holding = true
        let old = try await startCoordinator(
            "coordinator-old", role: "backup", data: data("data-old"), service: serviceOld,
            haListen: "tcp://127.0.0.1:\(linkOld)", haPeer: relayToA.endpoint)
        _ = try await submitUntilAccepted(serviceOld, items: 1)
        let oldBefore = try DataDirectoryContents(data("data-old"))

        // A, with the newer journal, meets it as its active peer.
        let a = try await startCoordinator(
            "coordinator-a-3", role: "primary", data: data("data-a"), service: serviceA,
            haListen: "tcp://127.0.0.1:\(linkA)", haPeer: "tcp://127.0.0.1:\(linkOld)")
        let aBefore = try DataDirectoryContents(data("data-a"))
        relayToA.holding = false
        let said = await a.waitForLine { $0.contains("is older than this one's") && $0.contains("not replacing it") }
        XCTAssertNotNil(said, a.outputText)
        for output in try await refusedStatus(serviceA) {
            XCTAssertTrue(output.contains("is older than this one's"), output)
        }
        // The older one goes on serving alone once it hears A starting (A announces from its next heartbeat on).
        let oldStatus = try await harness.waitForStatus(serviceOld) { status in
            (status["pair"] as? [String: Any])?["peer_state"] as? String == "starting-primary"
        }
        let pair = try XCTUnwrap(oldStatus["pair"] as? [String: Any], "\(oldStatus)")
        XCTAssertEqual(pair["state"] as? String, "active", "\(pair)")

        XCTAssertEqual(try DataDirectoryContents(data("data-a")), aBefore, "the newer journal changed")
        XCTAssertEqual(try DataDirectoryContents(data("data-old")), oldBefore, "the older journal changed")
        XCTAssertFalse(a.outputText.contains("now the passive one"), a.outputText)
        XCTAssertFalse(a.outputText.contains("now the active one"), a.outputText)
        XCTAssertFalse(old.outputText.contains("now the passive one"), old.outputText)
    }

    // MARK: - A bad checksum

    /// A peer posing as the active coordinator sends a passive one a journal message whose second frame fails
    /// its CRC-32: nothing of it is applied, it is counted, and the answer asks for the stream again; the same
    /// records sent intact are then appended.
    func testAJournalMessageWithABadChecksumIsNeverAppliedAndAGoodOneIs() async throws {
        let service = try loopbackEndpoint()
        let haListen = try loopbackEndpoint()
        let context = try MessagingContext()
        let peer = try await PairLinkPeer.open(connectingTo: haListen, context: context)
        do {
            let passive = try await startCoordinator(
                "coordinator-passive", role: "backup", data: data("data-p"), service: service, haListen: haListen,
                haPeer: peer.endpoint, extra: ["--metrics-listen", "127.0.0.1:0"])
            let metrics = try await metricsURL(passive)
            let firstAnnouncement = await peer.nextAnnouncement()
            let starting = try XCTUnwrap(firstAnnouncement, passive.outputText)
            let held = JournalPosition(starting.position)
            peer.announce(.active, at: held)
            let following = await peer.nextAnnouncement { $0.state == .passive }
            XCTAssertNotNil(following, passive.outputText)
            let before = try DataDirectoryContents(data("data-p"))

            let records: [JournalRecord] = [
                .batchRetired(batchID: "b-pair-fault-1"), .batchRetired(batchID: "b-pair-fault-2"),
            ]
            let reaches = records.reduce(held) { $0.advanced(by: $1) }
            let frames = records.map { JournalFraming.frame(JournalCodec.encode($0)) }
            var damaged = frames
            damaged[1][damaged[1].count - 1] ^= 0xFF  // a byte of the second record: its CRC-32 no longer matches
            func message(_ frames: [[UInt8]]) -> Message {
                .pairJournal(
                    WirePairJournal(
                        from: held.wire, reaches: reaches.wire, frames: frames.flatMap { $0 },
                        records: UInt32(records.count), snapshot: false))
            }

            peer.outbound.send(message(damaged))
            let refusedAnswer = await peer.nextHeld()
            let refused = try XCTUnwrap(refusedAnswer, passive.outputText)
            XCTAssertTrue(refused.rejected, "\(refused)")
            XCTAssertTrue(refused.gap, "the answer asks for the stream again: \(refused)")
            XCTAssertEqual(JournalPosition(refused.held), held, "\(refused)")
            let said = await passive.waitForLine { $0.contains("failed its checksum: nothing of the message applied") }
            XCTAssertNotNil(said, passive.outputText)
            XCTAssertEqual(try DataDirectoryContents(data("data-p")), before, "a damaged message was applied")
            let page = try await TestHTTPClient.get(metrics).text
            XCTAssertEqual(sample(#"shiftwork_pair_refused_total{what="stream"}"#, in: page), 1, page)

            peer.outbound.send(message(frames))
            let appliedAnswer = await peer.nextHeld()
            let applied = try XCTUnwrap(appliedAnswer, passive.outputText)
            XCTAssertFalse(applied.rejected, "\(applied)")
            XCTAssertEqual(JournalPosition(applied.held), reaches, "\(applied)")
            let after = try DataDirectoryContents(data("data-p"))
            XCTAssertEqual(after.journal, before.journal + frames.flatMap { $0 }, "the intact records, appended")
            XCTAssertEqual(after.results, before.results)
        } catch {
            await peer.close()
            throw error
        }
        await peer.close()
    }

    // MARK: - Both backup

    func testTwoCoordinatorsStartedAsBackupSaySoAndNeitherBecomesActive() async throws {
        let services = [try loopbackEndpoint(), try loopbackEndpoint()]
        let links = [try loopbackEndpoint(), try loopbackEndpoint()]
        var processes: [ManagedProcess] = []
        for index in 0..<2 {
            processes.append(
                try await startCoordinator(
                    "coordinator-\(index)", role: "backup", data: data("data-\(index)"), service: services[index],
                    haListen: links[index], haPeer: links[1 - index]))
        }
        for process in processes {
            let said = await process.waitForLine { $0.contains("both coordinators of the pair were started as backup") }
            XCTAssertNotNil(said, process.outputText)
        }
        for endpoint in services {
            for output in try await refusedStatus(endpoint) {
                XCTAssertTrue(output.contains("both coordinators of the pair were started as backup"), output)
            }
        }
        // A client's request (not only a status) is refused too while the two hear each other.
        for endpoint in services {
            let refusal = try await harness.withClient(endpoint) { client -> String? in
                do {
                    for try await event in await client.submit(
                        SubmitBatch(requestID: "", items: [BatchItem(source: "noop-0")], kind: .noop))
                    {
                        if case .accepted = event { return nil }
                    }
                    return "closed"
                } catch {
                    return "\(error)"
                }
            }
            XCTAssertNotNil(refusal, "a coordinator started alike accepted a batch")
        }
        for process in processes {
            XCTAssertFalse(process.outputText.contains("now the active one"), process.outputText)
        }
    }
}
