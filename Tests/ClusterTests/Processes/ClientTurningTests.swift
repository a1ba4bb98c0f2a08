import Messaging
import Wire
import XCTest

@testable import Cluster

/// A `ClusterClient` given two coordinators turns itself: against two real ROUTER sockets on loopback
/// that play the coordinators (`WirePeer`), the first refusing as passive once the batch runs.
final class ClientTurningTests: XCTestCase {
    func testAFollowedBatchIsReattachedByItsIDOnTheNextCoordinatorAndNoItemComesTwice() async throws {
        let context = try MessagingContext()
        let first = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let second = try await WirePeer(kind: .router, identity: nil, bind: "tcp://127.0.0.1:*", context: context)
        let (turns, reportTurn) = AsyncStream<CoordinatorTurn>.makeStream()
        do {
            let endpoints = try CoordinatorEndpoints([
                try XCTUnwrap(first.channel.boundEndpoint), try XCTUnwrap(second.channel.boundEndpoint),
            ])
            try await ClusterClient.withConnection(
                to: endpoints, responseTimeout: .seconds(30), livenessInterval: .milliseconds(100),
                onTurn: { reportTurn.yield($0) }
            ) { client in
                var events = await client.submit(
                    SubmitBatch(
                        requestID: "", items: [BatchItem(source: "noop-0"), BatchItem(source: "noop-1")], kind: .noop)
                ).makeAsyncIterator()
                let submit = await first.next { if case .submitBatch(let submit) = $0 { submit } else { nil } }
                let submitted = try XCTUnwrap(submit)
                let peer = try XCTUnwrap(first.lastIdentity)
                first.send(
                    .batchAccepted(
                        BatchAccepted(
                            requestID: submitted.requestID, batchID: "b-1", itemCount: 2, coordinatorID: "one")),
                    to: peer)
                first.send(Self.finished(0), to: peer)
                guard case .accepted("b-1", 2)? = try await events.next() else { return XCTFail("not accepted") }
                guard case .itemFinished(let item)? = try await events.next(), item.itemIndex == 0 else {
                    return XCTFail("item 0 did not come")
                }

                // The first coordinator becomes the passive one: it refuses the watchdog's status request.
                let asked = await first.next { if case .statusRequest(let request) = $0 { request } else { nil } }
                let status = try XCTUnwrap(asked)
                first.send(.refusal(Refusal(requestID: status.requestID, code: .passive, reason: "passive")), to: peer)

                // The second is asked for the batch by its ID, and sends all it has: item 0 again, and item 1.
                let fetch = await second.next { if case .fetchResults(let fetch) = $0 { fetch } else { nil } }
                let fetched = try XCTUnwrap(fetch, "the client did not re-attach on the second coordinator")
                XCTAssertEqual(fetched.batchID, "b-1")
                let samePeer = try XCTUnwrap(second.lastIdentity)
                XCTAssertEqual(samePeer, peer, "the client keeps its identity across the turn")
                second.send(
                    .batchAccepted(
                        BatchAccepted(
                            requestID: fetched.requestID, batchID: "b-1", itemCount: 2, coordinatorID: "two",
                            attached: true)), to: samePeer)
                second.send(Self.finished(0), to: samePeer)
                second.send(Self.finished(1), to: samePeer)
                second.send(.batchFinished(BatchFinished(batchID: "b-1", succeeded: 2)), to: samePeer)
                var later: [UInt32] = []
                var summary: BatchFinished?
                while let event = try await events.next() {
                    switch event {
                    case .itemFinished(let item): later.append(item.itemIndex)
                    case .itemsFinished(let items): later += items.map(\.itemIndex)
                    case .finished(let finished): summary = finished
                    default: break
                    }
                }
                XCTAssertEqual(later, [1], "item 0 came once, before the turn")
                XCTAssertEqual(summary?.succeeded, 2)
                // The refused status request went to the second coordinator too (before the re-attachment), with
                // its own request ID.
                XCTAssertTrue(
                    second.received.contains {
                        if case .statusRequest(let request) = $0 {
                            request.requestID == status.requestID
                        } else {
                            false
                        }
                    }, "\(second.received)")
            }
            reportTurn.finish()
            var seen: [CoordinatorTurn] = []
            for await turn in turns { seen.append(turn) }
            XCTAssertEqual(seen.map(\.reason), [.passive])
            XCTAssertEqual(seen.map(\.to), [endpoints.all[1]])
        } catch {
            await first.close()
            await second.close()
            await context.terminate()
            throw error
        }
        await first.close()
        await second.close()
        await context.terminate()
    }

    private static func finished(_ index: UInt32) -> Message {
        .itemFinished(ItemFinished(batchID: "b-1", itemIndex: index, outcome: .output(TaskOutput(data: []))))
    }
}
