import Operations
import XCTest

/// Groups: long-lived groups, collected child errors, groups as dependencies.
final class GroupTests: XCTestCase {
    func testLongLivedGroupFinishesAfterCloseAndLastChild() async throws {
        let group = GroupOperation(name: "batch", keepsRunningUntilClosed: true)
        let added = Gauge()
        group.addObserver(BlockObserver(didAddChild: { _, _ in added.enter() }))
        let queue = WorkQueue()
        try queue.addOperation(group)
        await eventually { group.isExecuting }
        var remotes: [CompletableOperation<Int>] = []
        for round in 0..<3 {
            let remote = CompletableOperation<Int>(name: "task\(round)")
            try group.addChild(remote)
            remotes.append(remote)
            await eventually { remote.isExecuting }
            remote.complete(with: round)
            await waitFor(remote)
            try await Task.sleep(for: .milliseconds(5))
            XCTAssertEqual(group.state, .executing, "no unfinished child, but not closed")
        }
        let last = CompletableOperation<Int>(name: "last")
        try group.addChild(last)
        group.close()
        try await Task.sleep(for: .milliseconds(5))
        XCTAssertEqual(group.state, .executing, "closed, but a child is still running")
        last.complete(with: 99)
        await waitFor(group)
        XCTAssertEqual(group.state, .finished)
        XCTAssertEqual(added.total, 4)
        XCTAssertThrowsError(try group.addChild(AsyncOperation(name: "late"))) { error in
            XCTAssertEqual(error as? OperationUsageError, .groupFinished(group: "batch", child: "late"))
        }
    }

    /// A long-lived group made with `keepsFinishedChildren: false` lets go of its finished children while it
    /// runs (they are deallocated), keeps its unfinished ones, and still cancels those when it is cancelled.
    func testAGroupThatDropsFinishedChildrenLetsThemGoAndStillCancelsTheOthers() async throws {
        let group = GroupOperation(name: "batch", keepsRunningUntilClosed: true, keepsFinishedChildren: false)
        try WorkQueue().addOperation(group)
        await eventually { group.isExecuting }
        weak var firstFinished: AsyncOperation?
        for round in 0..<300 {
            let child = AsyncBlockOperation(name: "done\(round)") {}
            if round == 0 { firstFinished = child }
            try group.addChild(child)
        }
        let waiting = CompletableOperation<Int>(name: "waiting")
        try group.addChild(waiting)
        await eventually { group.children.count < 150 }
        XCTAssertTrue(group.children.contains { $0 === waiting }, "an unfinished child stays")
        await eventually { firstFinished == nil }
        XCTAssertNil(firstFinished, "a finished child is deallocated while the group runs")
        XCTAssertEqual(group.state, .executing)
        group.cancel()
        await waitFor(group)
        XCTAssertEqual(waiting.state, .cancelled, "cancelling the group reaches the children it kept")
        XCTAssertEqual(group.state, .cancelled)
    }

    func testGroupCollectsChildErrorsAndChildrenDependOnOutsideOperations() async throws {
        let outside = ResultOperation<Int>(name: "outside") { 41 }
        let child = TransformOperation<Int, Int>(name: "child") { $0 + 1 }
        try child.injectResult(from: outside)
        let bad1 = AsyncBlockOperation(name: "bad1") { throw TestError("one") }
        let bad2 = AsyncBlockOperation(name: "bad2") { throw TestError("two") }
        let group = GroupOperation(name: "group", operations: [child, bad1, bad2])
        let queue = WorkQueue()
        try queue.addOperations([group, outside])
        await waitForQueue(queue)
        XCTAssertEqual(child.output, 42)
        XCTAssertEqual(group.state, .failed)
        XCTAssertEqual(Set(group.errors.compactMap { ($0 as? TestError)?.message }), ["one", "two"])
        XCTAssertEqual(group.childErrors.count, 2)
    }

    func testGroupAsADependency() async throws {
        let recorder = Recorder()
        let group = GroupOperation(
            name: "g",
            operations: (0..<5).map { index in
                AsyncBlockOperation(name: "child\(index)") {
                    try await Task.sleep(for: .milliseconds(2))
                    recorder.record("child")
                }
            })
        let after = AsyncBlockOperation(name: "after") { recorder.record("after") }
        try after.addDependency(group)
        let queue = WorkQueue()
        try queue.addOperations([after, group])
        await waitForQueue(queue)
        XCTAssertEqual(recorder.events, Array(repeating: "child", count: 5) + ["after"])
    }
}
