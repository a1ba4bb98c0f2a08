import Operations
import XCTest

/// A group configured the way seed 004 does: observers added in its initializer, after `super.init`, and
/// in `execute()` before `super.execute()`.
final class ObservedGroup: GroupOperation, @unchecked Sendable {  // @unchecked: restated from AsyncOperation
    let recorder: Recorder

    init(children: [AsyncOperation], recorder: Recorder) {
        self.recorder = recorder
        super.init(name: "observed", operations: children)
        addObserver(BlockObserver(didAddChild: { _, child in recorder.record("init observer: \(child.name)") }))
    }

    override func execute() async throws {
        addObserver(
            BlockObserver(didAddChild: { [recorder] _, child in recorder.record("execute observer: \(child.name)") }))
        try await super.execute()
    }
}

/// Groups as ProcedureKit defines them: initial children observable, errors of cancelled children kept.
final class GroupSemanticsTests: XCTestCase {
    // MARK: Initial children are added when the group executes

    func testObserversAddedAfterCreationHearEveryInitialChild() async throws {
        let recorder = Recorder()
        let first = AsyncBlockOperation(name: "first") {}
        let second = AsyncBlockOperation(name: "second") {}
        let group = ObservedGroup(children: [first, second], recorder: recorder)
        XCTAssertEqual(group.children.map(\.name), ["first", "second"], "children are known from creation")
        group.addObserver(
            BlockObserver(didAddChild: { _, child in recorder.record("outside observer: \(child.name)") }))
        XCTAssertEqual(recorder.events, [], "nothing is announced before the group executes")

        try WorkQueue().addOperation(group)
        await waitFor(group)
        XCTAssertEqual(group.state, .finished)
        // Every observer, whenever it was added before the group executed, hears both children, in order.
        for observer in ["init observer", "outside observer", "execute observer"] {
            XCTAssertEqual(
                recorder.events.filter { $0.hasPrefix(observer) }, ["\(observer): first", "\(observer): second"])
        }
    }

    func testChildAddedBeforeExecutionIsAnnouncedWhenAddedAndInitialChildrenWhenTheGroupExecutes() async throws {
        let recorder = Recorder()
        let group = GroupOperation(name: "group", operations: [AsyncBlockOperation(name: "initial") {}])
        group.addObserver(BlockObserver(didAddChild: { _, child in recorder.record(child.name) }))
        try group.addChild(AsyncBlockOperation(name: "added") {})
        XCTAssertEqual(recorder.events, ["added"])
        try WorkQueue().addOperation(group)
        await waitFor(group)
        XCTAssertEqual(recorder.events, ["added", "initial"])
        XCTAssertEqual(group.children.map(\.name), ["initial", "added"])
    }

    // MARK: Errors of children cancelled with one

    func testChildCancelledFromOutsideWithAnErrorFailsTheGroupWithThatError() async throws {
        let remote = CompletableOperation<Int>(name: "remote")
        let other = AsyncBlockOperation(name: "other") {}
        let group = GroupOperation(name: "group", operations: [remote, other])
        try WorkQueue().addOperation(group)
        await eventually { remote.isExecuting }
        remote.cancel(error: TestError("the user cancelled this item"))
        await waitFor(group)
        XCTAssertEqual(remote.state, .cancelled)
        XCTAssertEqual(other.state, .finished)
        XCTAssertEqual(group.state, .failed, "part of the group's work did not happen")
        XCTAssertEqual(group.childErrors.compactMap { $0 as? TestError }, [TestError("the user cancelled this item")])
        XCTAssertEqual(group.errors.compactMap { $0 as? TestError }, [TestError("the user cancelled this item")])
    }

    func testChildCancelledBeforeTheGroupRunsIsRecordedToo() async throws {
        let waiting = AsyncOperation(name: "waiting")
        let group = GroupOperation(name: "group", operations: [waiting])
        waiting.cancel(error: TestError("not needed"))
        try WorkQueue().addOperation(group)
        await waitFor(group)
        XCTAssertEqual(group.state, .failed)
        XCTAssertEqual(group.childErrors.compactMap { $0 as? TestError }, [TestError("not needed")])
    }

    func testChildCancelledWithoutAnErrorLeavesNothingToRecord() async throws {
        let remote = CompletableOperation<Int>(name: "remote")
        let group = GroupOperation(name: "group", operations: [remote])
        try WorkQueue().addOperation(group)
        await eventually { remote.isExecuting }
        remote.cancel()
        await waitFor(group)
        XCTAssertEqual(remote.state, .cancelled)
        XCTAssertEqual(group.state, .finished)
        XCTAssertTrue(group.childErrors.isEmpty)
    }

    func testCancellingTheGroupRecordsNoChildErrors() async throws {
        // A cancelled batch of many items must not hold one error per item: the group's own error says it all.
        let children = (0..<1_000).map { CompletableOperation<Int>(name: "item \($0)") }
        let group = GroupOperation(name: "batch", operations: children)
        try WorkQueue().addOperation(group)
        await eventually { children.allSatisfy(\.isExecuting) }
        group.cancel(error: TestError("batch cancelled"))
        await waitFor(group)
        XCTAssertEqual(group.state, .cancelled)
        XCTAssertTrue(children.allSatisfy { $0.state == .cancelled })
        XCTAssertTrue(group.childErrors.isEmpty)
        XCTAssertEqual(group.errors.compactMap { $0 as? TestError }, [TestError("batch cancelled")])
    }

    func testAChildCancelledBecauseASiblingFailedIsNotRecordedTwice() async throws {
        // download → tilt-shift, as a cluster batch item: the download's failure cancels the tilt-shift.
        let download = ResultOperation<[UInt8]>(name: "download") { throw TestError("404") }
        let tiltShift = TransformOperation<[UInt8], [UInt8]>(name: "tilt-shift") { $0 }
        try tiltShift.injectResult(from: download)
        let group = GroupOperation(name: "item", operations: [download, tiltShift])
        try WorkQueue().addOperation(group)
        await waitFor(group)
        XCTAssertEqual(tiltShift.state, .cancelled)
        XCTAssertTrue(tiltShift.errors.first is InjectionError, "the child itself keeps its error")
        XCTAssertEqual(group.state, .failed)
        XCTAssertEqual(group.childErrors.count, 1, "\(group.childErrors)")
        XCTAssertEqual(group.childErrors.first as? TestError, TestError("404"))
    }

    func testAChildCancelledBecauseOfAnOutsideDependencyIsRecorded() async throws {
        let outside = AsyncBlockOperation(name: "outside") { throw TestError("outside failed") }
        let child = AsyncOperation(name: "child")
        try child.addDependency(outside, policy: .requireSuccess)
        let group = GroupOperation(name: "group", operations: [child])
        let queue = WorkQueue()
        try queue.addOperations([group, outside])
        await waitForQueue(queue)
        XCTAssertEqual(child.state, .cancelled)
        XCTAssertEqual(group.state, .failed)
        assertDependencyFailed(group.childErrors.first, dependency: "outside", cause: TestError("outside failed"))
    }
}
