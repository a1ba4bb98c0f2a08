import Foundation
import Messaging
import ShiftworkTestSupport
import Wire
import XCTest

/// What a hostile coordinator (or a peer posing as one) cannot do: steer the operator's terminal
/// (`shiftwork status` shows its strings with every control character escaped, while `--json` keeps the
/// exact values), or make a worker flood the network with heartbeats.
final class HostileCoordinatorTests: ClusterTestCase {
    private let evilWorker = "w\u{1B}[2J\u{1B}[31m\nforged line"
    private let evilSource = "http://x/\u{1B}]0;owned\u{7}a.jpg"
    private let evilError = "failed\r\n2026-11-23 fake success\u{9B}0m"

    func testStatusEscapesWhatAHostileCoordinatorSays() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "hostile")
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        let (evilWorker, evilSource, evilError) = (self.evilWorker, self.evilSource, self.evilError)
        let answering = Task {
            for await message in router.messages {
                guard message.count >= 2, let payload = message.last,
                    case .statusRequest(let request) = try? WireCodec.decode(payload)
                else { continue }
                let reply = StatusReply(
                    requestID: request.requestID,
                    workers: [WorkerStatus(workerID: evilWorker, slots: 2, version: "1\u{1B}[5m")],
                    batches: [
                        BatchStatus(
                            batchID: "b-1\u{1B}[8m", itemCount: 1, failed: 1,
                            items: [
                                ItemStatus(itemIndex: 0, source: evilSource, state: "failed", error: evilError)
                            ])
                    ])
                router.send([message[0], WireCodec.encode(.statusReply(reply))])
            }
        }

        let (status, text) = try await harness.run(["status", "--coordinator", endpoint])
        XCTAssertEqual(status, 0, text)
        let (batchStatus, batchText) = try await harness.run(["status", "b-1", "--coordinator", endpoint])
        XCTAssertEqual(batchStatus, 0, batchText)
        for output in [text, batchText] {
            XCTAssertFalse(
                output.contains("\u{1B}") || output.contains("\r") || output.contains("\u{7}")
                    || output.unicodeScalars.contains("\u{9B}"),
                "raw control characters reached the terminal:\n\(output)")
            XCTAssertFalse(
                output.split(separator: "\n").contains { $0.hasPrefix("forged") || $0.hasPrefix("2026") }, output)
        }
        XCTAssertTrue(text.contains(#"w\u{1B}[2J\u{1B}[31m\nforged line"#), text)
        XCTAssertTrue(batchText.contains(#"http://x/\u{1B}]0;owned\u{7}a.jpg"#), batchText)
        XCTAssertTrue(batchText.contains(#"failed\r\n2026-11-23 fake success\u{9B}0m"#), batchText)

        // JSON keeps the exact values (escaped as JSON).
        let json = try await harness.status(endpoint)
        XCTAssertEqual(json.objects("workers").first?["id"] as? String, evilWorker)
        let items = json.objects("batches").first?.objects("item_states") ?? []
        XCTAssertEqual(items.first?["source"] as? String, evilSource)
        XCTAssertEqual(items.first?["error"] as? String, evilError)

        answering.cancel()
        await router.close()
        await context.terminate()
    }

    func testAWorkerClampsTheHeartbeatIntervalItIsGiven() async throws {
        let context = try MessagingContext()
        let router = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "hostile")
        let endpoint = try XCTUnwrap(router.boundEndpoint)
        try harness.startWorker("flooder", endpoint: endpoint)
        var welcomedAt: ContinuousClock.Instant?
        var heartbeats = 0
        let deadline = ContinuousClock.now + .seconds(30)
        for await message in router.messages {
            guard message.count >= 2, let payload = message.last, let decoded = try? WireCodec.decode(payload) else {
                continue
            }
            switch decoded {
            case .workerHello where welcomedAt == nil:
                // Asks for a heartbeat every millisecond.
                router.send([
                    message[0], WireCodec.encode(.welcome(Welcome(heartbeatIntervalMs: 1, coordinatorID: "hostile"))),
                ])
                welcomedAt = .now
            case .heartbeat:
                heartbeats += 1
            default:
                break
            }
            if let welcomedAt, ContinuousClock.now - welcomedAt > .seconds(2) { break }
            if ContinuousClock.now > deadline { break }
        }
        XCTAssertNotNil(welcomedAt, "the worker never said hello:\n\(harness.allOutput)")
        // Clamped to one every 100 ms: about 20 in two seconds, not 2,000.
        XCTAssertLessThanOrEqual(heartbeats, 30, "the worker sent \(heartbeats) heartbeats in two seconds")
        XCTAssertGreaterThanOrEqual(heartbeats, 5, "the worker stopped sending heartbeats")
        await router.close()
        await context.terminate()
    }
}
