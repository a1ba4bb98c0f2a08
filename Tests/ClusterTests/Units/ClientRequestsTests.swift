import Wire
import XCTest

@testable import Cluster

/// `ClientRequests`, the client's one registry of what waits for the coordinator, driven without a socket.
final class ClientRequestsTests: XCTestCase {
    private typealias Events = AsyncThrowingStream<BatchEvent, any Error>

    private func item(_ batchID: String, _ index: UInt32) -> ItemFinished {
        ItemFinished(batchID: batchID, itemIndex: index, outcome: .output(TaskOutput(data: [])))
    }

    /// Collects a stream's events and the error it ended with.
    private func drain(_ stream: Events) async -> (events: [BatchEvent], error: (any Error)?) {
        var events: [BatchEvent] = []
        do {
            for try await event in stream { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    func testAnAcceptanceIsTakenOnceAndExpiresOnlyPastItsDeadline() async {
        var requests = ClientRequests()
        let (stream, events) = Events.makeStream()
        let start = ContinuousClock.now
        let noAnswer = ClusterClientError.noAnswer(endpoint: "tcp://127.0.0.1:1", waited: .seconds(10))
        requests.awaitAcceptance("r1", events, deadline: start + .seconds(10), expired: noAnswer)
        XCTAssertEqual(requests.expire(now: start + .seconds(9)), 0, "not due yet")
        XCTAssertEqual(requests.waitingRequests, 1)
        XCTAssertEqual(requests.expire(now: start + .seconds(10)), 1)
        XCTAssertNil(requests.takeAcceptance("r1"), "an expired request is gone")
        let outcome = await drain(stream)
        XCTAssertEqual(outcome.error as? ClusterClientError, noAnswer)

        let (_, answered) = Events.makeStream()
        requests.awaitAcceptance("r2", answered, deadline: start, expired: noAnswer)
        XCTAssertNotNil(requests.takeAcceptance("r2"))
        XCTAssertNil(requests.takeAcceptance("r2"))
        XCTAssertEqual(requests.expire(now: start + .seconds(60)), 0, "an answered request does not expire")
    }

    func testAnUnansweredReplyFailsWithItsOwnErrorAtItsDeadline() async {
        var requests = ClientRequests()
        let start = ContinuousClock.now
        let expired = ClusterClientError.cancelNotAcknowledged(endpoint: "e", batchID: "b", waited: .seconds(1))
        var failure: (any Error)?
        do {
            _ = try await withCheckedThrowingContinuation { (reply: CheckedContinuation<CancelAccepted, any Error>) in
                requests.awaitReply("c1", .cancel(batchID: "b", reply), deadline: start, expired: expired)
                requests.expire(now: start)
            }
        } catch {
            failure = error
        }
        XCTAssertEqual(failure as? ClusterClientError, expired)
        XCTAssertEqual(requests.waitingRequests, 0)
    }

    func testItemsArePassedOnOnceAndABatchWithItemsMissingIsAskedForAgainOnce() async {
        var requests = ClientRequests()
        let (stream, events) = Events.makeStream()
        requests.follow("b", events, itemCount: 3, coordinatorID: "c1")
        XCTAssertEqual(requests.fresh([item("b", 0), item("b", 1)], of: "b")?.1.map(\.itemIndex), [0, 1])
        XCTAssertEqual(requests.fresh([item("b", 1)], of: "b")?.1.map(\.itemIndex), [], "a repeat is dropped")
        XCTAssertNil(requests.fresh([item("x", 0)], of: "x"), "a batch not followed")

        guard case .refetch(let requestID) = requests.finish("b", newRequestID: { "again" }) else {
            return XCTFail("item 2 is missing: the batch is asked for again")
        }
        XCTAssertEqual(requestID, "again")
        XCTAssertEqual(requests.takeReattachment("again"), "b")
        XCTAssertEqual(requests.fresh([item("b", 2)], of: "b")?.1.map(\.itemIndex), [2])
        guard case .finished(let continuation) = requests.finish("b", newRequestID: { "never" }) else {
            return XCTFail("the batch is complete")
        }
        continuation.finish()
        XCTAssertFalse(requests.isFollowing("b"))
        if case .unknown = requests.finish("b", newRequestID: { "never" }) {} else { XCTFail("forgotten") }
        _ = await drain(stream)
    }

    func testItemsAddedGrowTheCountAwaited() {
        var requests = ClientRequests()
        let (_, events) = Events.makeStream()
        requests.follow("b", events, itemCount: 1, coordinatorID: "c1")
        XCTAssertNotNil(
            requests.itemsAdded(
                ItemsAdded(batchID: "b", parentIndex: 0, firstIndex: 1, items: [BatchItem(source: "s")])))
        XCTAssertNotNil(requests.fresh([item("b", 0)], of: "b"))
        guard case .refetch = requests.finish("b", newRequestID: { "r" }) else {
            return XCTFail("two items are awaited now, one arrived")
        }
    }

    func testAnotherCoordinatorInstanceCausesOneReattachmentPerBatch() {
        var requests = ClientRequests()
        let (_, first) = Events.makeStream()
        let (_, second) = Events.makeStream()
        requests.follow("a", first, itemCount: 1, coordinatorID: "old")
        requests.follow("b", second, itemCount: 1, coordinatorID: "new")
        var counter = 0
        let next = { () -> String in
            counter += 1
            return "r\(counter)"
        }
        XCTAssertTrue(requests.reattachments(answeredBy: "", newRequestID: next).isEmpty, "no instance named")
        let asked = requests.reattachments(answeredBy: "new", newRequestID: next)
        XCTAssertEqual(asked.map(\.batchID), ["a"])
        XCTAssertTrue(requests.reattachments(answeredBy: "new", newRequestID: next).isEmpty, "already asked")
        XCTAssertEqual(requests.takeReattachment(asked[0].requestID), "a")
        requests.reattached("a", to: "new")
        XCTAssertTrue(requests.reattachments(answeredBy: "new", newRequestID: next).isEmpty)
    }

    func testFailAllFailsEveryStreamAndReplyAndForgetsEverything() async {
        var requests = ClientRequests()
        let (submitted, submission) = Events.makeStream()
        let (followed, batch) = Events.makeStream()
        let start = ContinuousClock.now
        requests.awaitAcceptance("s", submission, deadline: start + .seconds(5), expired: .closed)
        requests.follow("b", batch, itemCount: 2, coordinatorID: "c")
        _ = requests.reattachments(answeredBy: "other", newRequestID: { "r" })
        var replyFailure: (any Error)?
        do {
            _ = try await withCheckedThrowingContinuation { (reply: CheckedContinuation<StatusReply, any Error>) in
                requests.awaitReply("q", .status(reply), deadline: start + .seconds(5), expired: .closed)
                requests.failAll(.refused("everything"))
            }
        } catch {
            replyFailure = error
        }
        XCTAssertEqual(replyFailure as? ClusterClientError, .refused("everything"))
        let first = await drain(submitted)
        let second = await drain(followed)
        XCTAssertEqual(first.error as? ClusterClientError, .refused("everything"))
        XCTAssertEqual(second.error as? ClusterClientError, .refused("everything"))
        XCTAssertEqual(requests.waitingRequests, 0)
        XCTAssertFalse(requests.hasRunningBatches)
        XCTAssertNil(requests.takeReattachment("r"), "re-attachments in flight are forgotten too")
    }
}
