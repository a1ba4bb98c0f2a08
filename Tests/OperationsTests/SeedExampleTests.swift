import Operations
import Runtime
import XCTest

// The seeds' examples (Concurrency by Tutorials ch. 9, the Operations framework's injection and group
// pages), rebuilt on the engine. Images are byte arrays. Each operation class restates `@unchecked
// Sendable` because Swift requires it of subclasses of AsyncOperation; their state is in `let`s and
// LockedValues.

/// The seeds' `ImageDataProvider`: "when this operation finishes, I will provide you with an image".
protocol ImageDataProvider {
    var image: [UInt8]? { get }
}

/// Downloads an image (here: makes up bytes from the URL).
final class NetworkImageOperation: AsyncOperation, @unchecked Sendable {
    let url: String
    private let result = LockedValue<[UInt8]?>(nil)
    let recorder: Recorder?

    init(url: String, recorder: Recorder? = nil) {
        self.url = url
        self.recorder = recorder
        super.init(name: "network")
    }

    override func execute() async throws {
        recorder?.record("network")
        try await Task.sleep(for: .milliseconds(5))
        result.withLock { $0 = Array(url.utf8) }
    }

    var downloaded: [UInt8]? { result.withLock { $0 } }
}

extension NetworkImageOperation: ImageDataProvider {
    var image: [UInt8]? { downloaded }
}

final class DecryptOperation: AsyncOperation, @unchecked Sendable {
    let recorder: Recorder
    init(recorder: Recorder) {
        self.recorder = recorder
        super.init(name: "decrypt")
    }
    override func execute() async throws { recorder.record("decrypt") }
}

/// Tilt-shifts the image given at creation, or else the first image any dependency provides.
final class TiltShiftOperation: AsyncOperation, @unchecked Sendable {
    private let inputImage: [UInt8]?
    private let result = LockedValue<[UInt8]?>(nil)
    let recorder: Recorder?

    init(image: [UInt8]? = nil, recorder: Recorder? = nil) {
        inputImage = image
        self.recorder = recorder
        super.init(name: "tiltShift")
    }

    var outputImage: [UInt8]? { result.withLock { $0 } }

    override func execute() async throws {
        recorder?.record("tiltShift")
        let dependencyImage =
            dependencies
            .compactMap { ($0 as? ImageDataProvider)?.image }
            .first
        guard let inputImage = inputImage ?? dependencyImage else { return }
        result.withLock { $0 = inputImage.reversed() }
    }

    /// Callback run **on the main actor** when the operation completes (the seeds' "main thread").
    func onImageProcessed(_ handler: @escaping @MainActor @Sendable ([UInt8]?) -> Void) {
        onMainActorCompletion { operation in
            handler((operation as? TiltShiftOperation)?.outputImage)
        }
    }
}

extension TiltShiftOperation: ImageDataProvider {
    var image: [UInt8]? { outputImage }
}

// Injection page: DataRetrieval (a result) → DataProcessing (a requirement and a result).

final class DataRetrieval: ResultOperation<[UInt8]>, @unchecked Sendable {
    let payload: [UInt8]
    let failure: (any Error)?
    init(payload: [UInt8], failure: (any Error)? = nil) {
        self.payload = payload
        self.failure = failure
        super.init(name: "DataRetrieval")
    }
    override func produce() async throws -> [UInt8] {
        if let failure { throw failure }
        return payload
    }
}

final class DataProcessing: TransformOperation<[UInt8], [UInt8]>, @unchecked Sendable {
    init() { super.init(name: "DataProcessing") }
    override func transform(_ input: [UInt8]) async throws -> [UInt8] { input.map { $0 &+ 1 } }
}

// Groups page.

final class FooOperation: ResultOperation<Bool>, @unchecked Sendable {
    init(doBaz: Bool) { super.init(name: "Foo") { doBaz } }
}

final class FooBarBazOperation: GroupOperation, @unchecked Sendable {
    let recorder: Recorder
    init(doBaz: Bool, recorder: Recorder) {
        self.recorder = recorder
        super.init(name: "FooBarBaz", operations: [FooOperation(doBaz: doBaz)])
    }

    override func childDidFinish(_ child: AsyncOperation) {
        recorder.record("finished \(child.name)")
        if child.state == .finished && !isCancelled, let foo = child as? FooOperation {
            let next: AsyncOperation
            if foo.output == true {
                next = AsyncBlockOperation(name: "Baz") { [recorder] in
                    try await Task.sleep(for: .milliseconds(10))
                    recorder.record("Baz ran")
                }
            } else {
                next = AsyncBlockOperation(name: "Bar") { [recorder] in recorder.record("Bar ran") }
            }
            try? addChild(next)
        }
    }
}

/// Persists the login token delivered by the login task.
final class PersistLoginInfo: TransformOperation<String, Void>, @unchecked Sendable {
    let credentials: String
    init(credentials: String) {
        self.credentials = credentials
        super.init(name: "PersistLoginInfo")
    }
    override func transform(_ token: String) async throws {}
}

/// The seeds' LoginOperation, with the session task injected (a remote operation completed from
/// outside): a persist child depends on it, and cancelling the task from outside cancels the group.
final class LoginOperation: GroupOperation, @unchecked Sendable {
    let task: CompletableOperation<String>
    let persist: PersistLoginInfo

    init(credentials: String, task: CompletableOperation<String>) {
        self.task = task
        let persist = PersistLoginInfo(credentials: credentials)
        // Do any configuration or setup (a fresh pair cannot form a cycle).
        try? persist.injectResult(from: task)
        self.persist = persist
        super.init(name: "Login", operations: [persist, task])
        addCondition(MutualExclusion(LoginOperation.self))
    }

    override func execute() async throws {
        task.addObserver(
            BlockObserver(didCancel: { [weak self] _, errors in
                self?.cancel(error: errors.first)
            }))
        try await super.execute()
    }
}

final class SeedExampleTests: XCTestCase {
    func testDependenciesRunInOrderAndCanBeRemoved() async throws {
        let recorder = Recorder()
        let networkOp = NetworkImageOperation(url: "https://example.com/a.jpg", recorder: recorder)
        let decryptOp = DecryptOperation(recorder: recorder)
        let tiltShiftOp = TiltShiftOperation(recorder: recorder)

        try decryptOp.addDependency(networkOp)
        try tiltShiftOp.addDependency(decryptOp)
        XCTAssertTrue(tiltShiftOp.dependencies.first === decryptOp)
        XCTAssertEqual(decryptOp.dependencies.count, 1)

        let queue = WorkQueue(name: "seeds")
        // Enqueue in reverse: the queue tracks the dependencies.
        try queue.addOperations([tiltShiftOp, decryptOp, networkOp])
        await waitForQueue(queue)
        XCTAssertEqual(recorder.events, ["network", "decrypt", "tiltShift"])

        // removeDependency: the tilt shift no longer waits for the decryption.
        let recorder2 = Recorder()
        let slowDecrypt = AsyncBlockOperation(name: "slowDecrypt") {
            try await Task.sleep(for: .milliseconds(50))
            recorder2.record("decrypt")
        }
        let tilt = TiltShiftOperation(image: [1, 2, 3], recorder: recorder2)
        try tilt.addDependency(slowDecrypt)
        tilt.removeDependency(slowDecrypt)
        XCTAssertTrue(tilt.dependencies.isEmpty)
        try queue.addOperations([slowDecrypt, tilt])
        await waitForQueue(queue)
        XCTAssertEqual(recorder2.events, ["tiltShift", "decrypt"])
        XCTAssertEqual(tilt.outputImage, [3, 2, 1])
    }

    func testCycleIsRejectedAndNamed() throws {
        // The seeds' deadlock: 2 can't start until 5 is done, 5 until 3, 3 until 2.
        let op2 = AsyncOperation(name: "2")
        let op5 = AsyncOperation(name: "5")
        let op3 = AsyncOperation(name: "3")
        try op5.addDependency(op3)
        try op3.addDependency(op2)
        XCTAssertThrowsError(try op2.addDependency(op5)) { error in
            guard let cycle = error as? DependencyCycleError else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(cycle.cycle, ["2", "5", "3", "2"])
            XCTAssertEqual(cycle.operationIDs, [op2.id, op5.id, op3.id, op2.id])
            XCTAssertTrue(cycle.description.contains("2 → 5 → 3 → 2"), cycle.description)
        }
        XCTAssertTrue(op2.dependencies.isEmpty, "a rejected edge is not added")
        XCTAssertThrowsError(try op2.addDependency(op2)) { error in
            XCTAssertEqual((error as? DependencyCycleError)?.cycle, ["2", "2"])
        }
        // Built in the other order, the backward search finds it.
        let a = AsyncOperation(name: "a")
        let b = AsyncOperation(name: "b")
        let c = AsyncOperation(name: "c")
        try a.addDependency(b)
        try b.addDependency(c)
        XCTAssertThrowsError(try c.addDependency(a)) { error in
            XCTAssertEqual((error as? DependencyCycleError)?.cycle, ["c", "a", "b", "c"])
        }
    }

    func testProtocolSearchAmongDependencies() async throws {
        let downloadOp = NetworkImageOperation(url: "abc")
        let tiltShiftOp = TiltShiftOperation()
        try tiltShiftOp.addDependency(downloadOp)
        let queue = WorkQueue()
        try queue.addOperation(downloadOp)
        try queue.addOperation(tiltShiftOp)
        await waitForQueue(queue)
        XCTAssertEqual(tiltShiftOp.image, Array("cba".utf8))
    }

    func testCompletionHandlerRunsOnTheMainActor() async throws {
        let tiltShiftOp = TiltShiftOperation(image: [1, 2])
        let delivered = expectation(description: "image processed on the main actor")
        tiltShiftOp.onImageProcessed { image in
            MainActor.assertIsolated("the handler is documented to run on the main actor")
            XCTAssertEqual(image, [2, 1])
            delivered.fulfill()
        }
        try WorkQueue().addOperation(tiltShiftOp)
        await fulfillment(of: [delivered], timeout: 10)
    }

    func testTypedInjection() async throws {
        let retrieval = DataRetrieval(payload: [1, 2, 3])
        let processing = DataProcessing()
        try processing.injectResult(from: retrieval)
        XCTAssertTrue(processing.dependencies.first === retrieval, "injection adds the dependency")
        let queue = WorkQueue()
        try queue.addOperations([retrieval, processing])
        await waitForQueue(queue)
        XCTAssertEqual(processing.input, [1, 2, 3])
        XCTAssertEqual(processing.output, [2, 3, 4])
        XCTAssertEqual(processing.state, .finished)
    }

    func testFailedDependencyCancelsConsumerWithInjectionError() async throws {
        let retrieval = DataRetrieval(payload: [], failure: TestError("offline"))
        let processing = DataProcessing()
        try processing.injectResult(from: retrieval)
        let queue = WorkQueue()
        try queue.addOperations([retrieval, processing])
        await waitForQueue(queue)
        XCTAssertEqual(retrieval.state, .failed)
        XCTAssertEqual(processing.state, .cancelled)
        guard
            case .dependencyDidNotSucceed(let dependency, let state, let errors)? = processing.errors.first
                as? InjectionError
        else {
            return XCTFail("expected an InjectionError, got \(processing.errors)")
        }
        XCTAssertEqual(dependency, "DataRetrieval")
        XCTAssertEqual(state, .failed)
        XCTAssertEqual(errors.first as? TestError, TestError("offline"))

        // A cancelled producer too.
        let cancelledRetrieval = DataRetrieval(payload: [1])
        let processing2 = DataProcessing()
        try processing2.injectResult(from: cancelledRetrieval)
        cancelledRetrieval.cancel(error: TestError("user"))
        XCTAssertEqual(processing2.state, .cancelled)
        guard case .dependencyDidNotSucceed(_, .cancelled, let causes)? = processing2.errors.first as? InjectionError
        else {
            return XCTFail("expected an InjectionError, got \(processing2.errors)")
        }
        XCTAssertEqual(causes.first as? TestError, TestError("user"))
    }

    func testManualInjectionWithSeveralInputs() async throws {
        let retrieval = DataRetrieval(payload: [10])
        let header = ResultOperation<String>(name: "header") { "hdr" }
        let failing = DataRetrieval(payload: [], failure: TestError("bad"))
        let combine = ManualCombine()
        try combine.injectResult(from: retrieval) { op, dep, errors in
            XCTAssertTrue(errors.isEmpty)
            op.store.withLock { $0.bytes = dep.output }
        }
        try combine.injectResult(from: header) { op, dep, _ in
            op.store.withLock { $0.header = dep.output }
        }
        try combine.injectResult(from: failing) { op, dep, errors in
            // Here we have access to both operations, plus any errors from the dependency.
            XCTAssertEqual(dep.state, .failed)
            op.store.withLock { $0.dependencyErrors = errors.count }
        }
        let queue = WorkQueue()
        try queue.addOperations([combine, retrieval, header, failing])
        await waitForQueue(queue)
        XCTAssertEqual(combine.state, .finished)
        XCTAssertEqual(combine.result, "hdr:10:1")
    }

    func testGroupBuiltAtInitRunsItsChildren() async throws {
        let task = CompletableOperation<String>(name: "LoginSessionTask") { operation in
            operation.complete(with: "token-1")
        }
        let login = LoginOperation(credentials: "alice", task: task)
        XCTAssertEqual(login.name, "Login")
        XCTAssertEqual(login.children.count, 2)
        let queue = WorkQueue()
        try queue.addOperation(login)
        await waitForQueue(queue)
        XCTAssertEqual(login.state, .finished)
        XCTAssertEqual(login.persist.input, "token-1")
        XCTAssertEqual(login.persist.state, .finished)
    }

    func testChildrenAddedWhileRunningFooBarBaz() async throws {
        for doBaz in [true, false] {
            let recorder = Recorder()
            let group = FooBarBazOperation(doBaz: doBaz, recorder: recorder)
            group.addObserver(BlockObserver(didFinish: { _, _, _ in recorder.record("group finished") }))
            try WorkQueue().addOperation(group)
            await waitFor(group)
            let expected = doBaz ? "Baz" : "Bar"
            XCTAssertEqual(group.state, .finished)
            XCTAssertEqual(group.children.map(\.name), ["Foo", expected])
            XCTAssertEqual(
                recorder.events, ["finished Foo", "\(expected) ran", "finished \(expected)", "group finished"])
        }
    }

    func testCancellingAGroupCancelsEveryChild() async throws {
        let started = Gauge()
        let observedCancellation = Gauge()
        let children = (0..<4).map { index in
            AsyncBlockOperation(name: "child\(index)") {
                started.enter()
                do {
                    try await Task.sleep(for: .seconds(30))
                } catch {
                    observedCancellation.enter()
                    throw error
                }
            }
        }
        let pendingChild = AsyncOperation(name: "waits forever")
        try pendingChild.addDependency(CompletableOperation<Int>(name: "never enqueued"))
        let group = GroupOperation(name: "group", operations: children + [pendingChild])
        try WorkQueue().addOperation(group)
        await eventually("children started") { started.total == 4 }
        group.cancel(error: TestError("stop"))
        await waitFor(group)
        XCTAssertEqual(group.state, .cancelled)
        XCTAssertEqual(group.errors.first as? TestError, TestError("stop"))
        for child in group.children {
            XCTAssertEqual(child.state, .cancelled, child.name)
            XCTAssertEqual(child.errors.first as? TestError, TestError("stop"))
        }
        XCTAssertEqual(observedCancellation.total, 4, "the tasks running execute() were cancelled")
    }

    func testInjectedChildCancelledFromOutsideCancelsTheGroup() async throws {
        let sent = Gauge()
        let task = CompletableOperation<String>(name: "LoginSessionTask") { _ in sent.enter() }
        let login = LoginOperation(credentials: "bob", task: task)
        try WorkQueue().addOperation(login)
        await eventually("login request sent") { sent.total == 1 }
        task.cancel(error: TestError("user pressed cancel"))
        await waitFor(login)
        XCTAssertEqual(task.state, .cancelled)
        XCTAssertEqual(login.state, .cancelled)
        XCTAssertEqual(login.persist.state, .cancelled)
        XCTAssertEqual(login.errors.first as? TestError, TestError("user pressed cancel"))
    }

    func testMutualExclusion() async throws {
        let gauge = Gauge()
        let queue = WorkQueue()
        let logins = (0..<5).map { index in
            let operation = AsyncBlockOperation(name: "login\(index)") {
                gauge.enter()
                try await Task.sleep(for: .milliseconds(5))
                gauge.leave()
            }
            operation.addCondition(MutualExclusion(LoginOperation.self))
            return operation
        }
        try queue.addOperations(logins)
        await waitForQueue(queue)
        XCTAssertEqual(gauge.total, 5)
        XCTAssertEqual(gauge.maximum, 1)
        XCTAssertEqual(MutualExclusion.holders(of: String(reflecting: LoginOperation.self)), 0)
    }
}

/// A consumer with several inputs, filled by manual injection.
final class ManualCombine: AsyncOperation, @unchecked Sendable {
    struct Store {
        var bytes: [UInt8]?
        var header: String?
        var dependencyErrors = 0
        var result: String?
    }
    let store = LockedValue(Store())
    init() { super.init(name: "combine") }
    var result: String? { store.withLock { $0.result } }
    override func execute() async throws {
        store.withLock { s in
            s.result = "\(s.header ?? "-"):\(s.bytes.map { $0.map(String.init).joined() } ?? "-"):\(s.dependencyErrors)"
        }
    }
}
