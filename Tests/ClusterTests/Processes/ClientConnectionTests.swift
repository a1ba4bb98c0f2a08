import Messaging
import Wire
import XCTest

@testable import Cluster

/// The client's connection as one task group owned by its scope (`ClusterClient.withConnection`): response timers, the reader
/// and `close()` against a real ROUTER socket on loopback that receives every request and answers what
/// the test tells it to.
final class ClientConnectionTests: XCTestCase {
    func testUnansweredRequestsExpireAndCloseFailsWhatWaitsAndEverythingAfter() async throws {
        let context = try MessagingContext()
        let silent = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "silent")
        let endpoint = try XCTUnwrap(silent.boundEndpoint)
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .milliseconds(300)) { client in

            // Nothing answers: the request's timer (a child of the connection's group) fails it with noAnswer.
            do {
                _ = try await client.status()
                XCTFail("nothing answers")
            } catch let error as ClusterClientError {
                XCTAssertEqual(error, .noAnswer(endpoint: endpoint, waited: .milliseconds(300)))
            }
            var events = await client.submit(SubmitBatch(requestID: "", items: [BatchItem(source: "a.jpg")]))
                .makeAsyncIterator()
            do {
                _ = try await events.next()
                XCTFail("nothing accepts the batch")
            } catch let error as ClusterClientError {
                XCTAssertEqual(error, .noAnswer(endpoint: endpoint, waited: .milliseconds(300)))
            }

            // The requests did reach the socket: the ROUTER got a status request and the submission.
            var received = silent.messages.makeAsyncIterator()
            var kinds: [String] = []
            while kinds.count < 2, let frames = await received.next(), let payload = frames.last {
                switch try WireCodec.decode(payload) {
                case .statusRequest: kinds.append("status")
                case .submitBatch: kinds.append("submit")
                default: break
                }
            }
            XCTAssertEqual(kinds, ["status", "submit"])

            await client.close()
            do {
                _ = try await client.status()
                XCTFail("a closed client refuses requests")
            } catch let error as ClusterClientError {
                XCTAssertEqual(error, .closed)
            }
            var afterClose = await client.results(batchID: "b").makeAsyncIterator()
            do {
                _ = try await afterClose.next()
                XCTFail("a closed client refuses requests")
            } catch let error as ClusterClientError {
                XCTAssertEqual(error, .closed)
            }
        }
        await silent.close()
        await context.terminate()
    }

    func testCloseFailsARequestStillWaitingForItsAnswer() async throws {
        let context = try MessagingContext()
        let silent = try await SocketChannel.open(
            context: context, kind: .router, bind: ["tcp://127.0.0.1:*"], name: "silent")
        let endpoint = try XCTUnwrap(silent.boundEndpoint)
        // A timeout no test reaches: only close() can end the request.
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(3_600)) { client in
            let waiting = Task { () -> ClusterClientError? in
                do {
                    _ = try await client.status()
                    return nil
                } catch {
                    return error as? ClusterClientError
                }
            }
            // Once the request is on the wire, it is waiting in the client.
            var received = silent.messages.makeAsyncIterator()
            _ = await received.next()
            await client.close()
            let failure = await waiting.value
            XCTAssertEqual(failure, .closed)
        }
        await silent.close()
        await context.terminate()
    }
}
