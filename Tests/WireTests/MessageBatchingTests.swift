import Wire
import XCTest

/// Grouping messages into the batch messages of minor 1, and taking them apart.
final class MessageBatchingTests: XCTestCase {
    private func assignment(_ id: Int, input bytes: Int = 0) -> Message {
        .taskAssignment(
            TaskAssignment(
                taskID: "b/\(id)", batchID: "b", attempt: 1, kind: bytes > 0 ? .tiltShift : .noop,
                inputs: bytes > 0
                    ? [InjectedInput(fromTaskID: "d/\(id)", data: [UInt8](repeating: 7, count: bytes))] : []))
    }

    private func result(_ id: Int, bytes: Int = 0) -> Message {
        .taskResult(
            TaskResult(
                taskID: "b/\(id)", attempt: 1, outcome: .output(TaskOutput(data: [UInt8](repeating: 1, count: bytes)))))
    }

    private func item(_ index: Int) -> Message {
        .itemFinished(
            ItemFinished(
                batchID: "b", itemIndex: UInt32(index), outputName: "item-\(index)",
                outcome: .output(TaskOutput(data: []))))
    }

    /// The plain messages of `messages`, batches taken apart.
    private func flattened(_ messages: [Message]) -> [Message] {
        messages.flatMap(MessageBatching.unbatched)
    }

    func testConsecutiveMessagesOfOneKindAreGroupedInOrder() {
        let messages = (0..<5).map { result($0) }
        let batched = MessageBatching.coalesce(messages)
        XCTAssertEqual(batched.count, 1)
        guard case .taskResults(let results) = batched.first else { return XCTFail("\(batched)") }
        XCTAssertEqual(results.map(\.taskID), (0..<5).map { "b/\($0)" })
        XCTAssertEqual(flattened(batched), messages)
    }

    func testOtherMessagesSplitRunsAndKeepTheirPlace() {
        let finished = Message.batchFinished(BatchFinished(batchID: "b", succeeded: 3))
        let messages = [item(0), item(1), finished, item(2), assignment(3), assignment(4), result(5)]
        let batched = MessageBatching.coalesce(messages)
        XCTAssertEqual(batched.count, 5, "\(batched)")
        guard case .itemsFinished(let first) = batched[0] else { return XCTFail("\(batched[0])") }
        XCTAssertEqual(first.map(\.itemIndex), [0, 1])
        XCTAssertEqual(batched[1], finished)
        XCTAssertEqual(batched[2], item(2), "a run of one stays a plain message")
        guard case .taskAssignments(let assignments) = batched[3] else { return XCTFail("\(batched[3])") }
        XCTAssertEqual(assignments.map(\.taskID), ["b/3", "b/4"])
        XCTAssertEqual(batched[4], result(5))
        XCTAssertEqual(flattened(batched), messages)
    }

    func testAGroupHoldsAtMostMaxCountElements() {
        let messages = (0..<10).map { result($0) }
        let batched = MessageBatching.coalesce(messages, limits: MessageBatching.Limits(maxCount: 4))
        let sizes = batched.map { message -> Int in
            if case .taskResults(let results) = message { return results.count }
            return 1
        }
        XCTAssertEqual(sizes, [4, 4, 2])
        XCTAssertEqual(flattened(batched), messages)
    }

    func testLargePayloadsTravelAlone() {
        let limits = MessageBatching.Limits(maxCount: 100, maxPayloadBytes: 1_000)
        let messages = [
            assignment(0, input: 10), assignment(1, input: 5_000), assignment(2, input: 10), assignment(3, input: 990),
        ]
        let over = MessageBatching.coalesce(
            [assignment(4, input: 10), assignment(5, input: 991)], limits: limits)
        XCTAssertEqual(over.count, 2, "10 + 991 is over the limit")
        let batched = MessageBatching.coalesce(messages, limits: limits)
        XCTAssertEqual(
            batched.count, 3, "the 5,000-byte input goes alone, and splits the others; 10 + 990 fits in 1,000")
        guard batched.count == 3 else { return }
        XCTAssertEqual(batched[0], assignment(0, input: 10))
        XCTAssertEqual(batched[1], assignment(1, input: 5_000))
        guard case .taskAssignments(let last) = batched[2] else { return XCTFail("\(batched[2])") }
        XCTAssertEqual(last.map(\.taskID), ["b/2", "b/3"])
        XCTAssertEqual(flattened(batched), messages)
    }

    func testSingleAndEmptyInputsAreUnchanged() {
        XCTAssertEqual(MessageBatching.coalesce([]), [])
        XCTAssertEqual(MessageBatching.coalesce([result(1)]), [result(1)])
        let plain = Message.heartbeat(Heartbeat(workerID: "w"))
        XCTAssertEqual(MessageBatching.unbatched(plain), [plain])
        XCTAssertEqual(MessageBatching.unbatched(.taskResults([])), [])
    }

    func testBatchesSurviveTheWire() throws {
        let messages = (0..<300).map { result($0, bytes: $0 % 7) } + (0..<300).map { item($0) }
        for message in MessageBatching.coalesce(messages) {
            XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message)
        }
    }

    func testAGroupingUsedForOnePeerAfterAnotherStartsEachAfresh() {
        // As the coordinator uses it: one grouping, finished once per peer, its storage kept between them.
        var grouping = MessageBatching.Grouping(limits: MessageBatching.Limits(maxCount: 3))
        let cancel = Message.cancelTask(CancelTask(taskID: "b/9", reason: "cancelled", taskKey: 9))
        var first: [Message] = []
        for message in [assignment(0), assignment(1), cancel, assignment(2)] { grouping.add(message) }
        grouping.finish { first.append($0) }
        XCTAssertEqual(first.count, 3, "\(first)")
        guard case .taskAssignments(let run) = first[0] else { return XCTFail("\(first[0])") }
        XCTAssertEqual(run.map(\.taskID), ["b/0", "b/1"])
        XCTAssertEqual(first[1], cancel, "the cancel keeps its place between the runs")
        XCTAssertEqual(first[2], assignment(2), "a run of one is the plain message")

        var second: [Message] = []
        let messages = (10..<17).map { assignment($0) }
        for message in messages { grouping.add(message) }
        grouping.finish { second.append($0) }
        XCTAssertEqual(second.count, 3, "7 assignments at most 3 a batch: \(second)")
        XCTAssertEqual(flattened(second), messages, "nothing of the first peer's messages is left in the grouping")
        XCTAssertEqual(second, MessageBatching.coalesce(messages, limits: MessageBatching.Limits(maxCount: 3)))

        var nothing: [Message] = []
        grouping.finish { nothing.append($0) }
        XCTAssertEqual(nothing, [], "finished groupings are empty")
    }

    func testAGroupingClosesARunBeforeItsPayloadLimit() {
        var grouping = MessageBatching.Grouping(limits: MessageBatching.Limits(maxCount: 100, maxPayloadBytes: 10))
        let messages = [result(0, bytes: 4), result(1, bytes: 4), result(2, bytes: 4), result(3, bytes: 20), result(4)]
        for message in messages { grouping.add(message) }
        let grouped = grouping.finish()
        XCTAssertEqual(grouped.count, 4, "\(grouped)")
        guard case .taskResults(let firstRun) = grouped[0] else { return XCTFail("\(grouped[0])") }
        XCTAssertEqual(firstRun.map(\.taskID), ["b/0", "b/1"], "8 bytes; a third 4 would pass 10")
        XCTAssertEqual(grouped[1], result(2, bytes: 4), "closed before a payload of 20: a run of one, sent plain")
        XCTAssertEqual(grouped[2], result(3, bytes: 20), "a payload over the limit travels alone")
        XCTAssertEqual(grouped[3], result(4))
        XCTAssertEqual(flattened(grouped), messages)
    }
}
