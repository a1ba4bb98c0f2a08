import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// What a hostile but authenticated peer can do with the witnessed position (docs/failover.md, "The witnessed
/// position", "The bound"), against a real pair on loopback: the active coordinator hears its passive peer, and a
/// peer sends requests whose witnessed positions no coordinator of the pair could have written (terms far ahead;
/// records far beyond both journals). Each value is ignored and counted, each request served as one without it,
/// and the active coordinator stays active.
final class PairWitnessBoundTests: ClusterTestCase {
    func testWitnessesNoCoordinatorCouldHaveWrittenAreIgnoredCountedAndTheActiveOneStaysActive() async throws {
        let ports = try (0..<4).map { _ in try freeLoopbackPort() }
        let service = ["tcp://127.0.0.1:\(ports[0])", "tcp://127.0.0.1:\(ports[1])"]
        let link = ["tcp://127.0.0.1:\(ports[2])", "tcp://127.0.0.1:\(ports[3])"]
        var coordinators: [ManagedProcess] = []
        for (index, role) in ["primary", "backup"].enumerated() {
            coordinators.append(
                try harness.launch(
                    "coordinator-\(role)",
                    [
                        "coordinator", "--listen", service[index], "--insecure", "--data-dir",
                        harness.scratch.appendingPathComponent("data-\(role)").path, "--ha", role, "--ha-listen",
                        link[index], "--ha-peer", link[1 - index], "--failover-timeout", "1.5",
                    ] + (index == 0 ? ["--metrics-listen", "127.0.0.1:0"] : [])))
        }
        let active = coordinators[0]
        let metricsLine = await active.waitForLine { $0.hasPrefix("metrics on ") }
        let metricsURL = try XCTUnwrap(
            metricsLine?.components(separatedBy: "metrics on ").last?.trimmingCharacters(in: .whitespaces),
            active.outputText)
        let inStep = await active.waitForLine { $0.contains("acknowledgements now wait for it") }
        XCTAssertNotNil(inStep, harness.allOutput)

        let context = try MessagingContext()
        let peer = try await WirePeer(kind: .dealer, identity: "hostile", connect: service[0], context: context)
        let absurd = [
            WirePairPosition(term: .max, records: .max),  // terms far ahead
            WirePairPosition(term: 2, records: 1),  // a term of the primary's own parity it never started
            WirePairPosition(term: 0, records: 1_000_000),  // beyond both journals, the passive peer heard
        ]
        for (index, witnessed) in absurd.enumerated() {
            let requestID = "hostile-\(index)"
            let submit = SubmitBatch(requestID: requestID, items: [BatchItem(source: "a")], kind: .noop)
            peer.channel.send([WireCodec.encode(.submitBatch(submit), witnessed: witnessed)])
            let accepted = await peer.next {
                if case .batchAccepted(let accepted) = $0, accepted.requestID == requestID { accepted } else { nil }
            }
            XCTAssertNotNil(accepted, "\(witnessed): served as a request without a witness:\n\(harness.allOutput)")
        }
        await peer.close()

        let page = try await TestHTTPClient.get(metricsURL).text
        XCTAssertEqual(
            MetricsTests.samples(page)["shiftwork_messages_refused_total{field=\"Envelope.witnessed\"}"],
            Double(absurd.count), page)
        XCTAssertTrue(active.outputText.contains("ignored a request's witnessed journal position"), active.outputText)
        XCTAssertFalse(active.outputText.contains("now the passive one of its pair"), active.outputText)
        let status = try await harness.status(service[0])
        XCTAssertEqual(pairField(status, "state"), "active", "\(status)")
    }
}
