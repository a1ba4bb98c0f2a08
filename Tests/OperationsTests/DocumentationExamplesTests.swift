// swift-format-ignore-file
// (The examples below are docs/operations.md's, compared as written by testDocumentationIsInSync.)
import Foundation
import Operations
import Runtime
import XCTest

// The code of docs/operations.md, verbatim (testDocumentationIsInSync checks it): every example in the
// guide compiles, and the tests below run them.

// BEGIN GUIDE EXAMPLES
final class Checksum: AsyncOperation, @unchecked Sendable {
    let bytes: [UInt8]
    init(bytes: [UInt8]) {
        self.bytes = bytes
        super.init(name: "checksum")
    }
    override func execute() async throws {
        guard !bytes.isEmpty else { throw TestError("nothing to check") }
        try Task.checkCancellation()
    }
}

func dependencies() async throws {
    let networkOp = AsyncBlockOperation(name: "network") {}
    let decryptOp = AsyncBlockOperation(name: "decrypt") {}
    let tiltShiftOp = AsyncBlockOperation(name: "tiltShift") {}

    try decryptOp.addDependency(networkOp)
    try tiltShiftOp.addDependency(decryptOp)

    // Remove it again if needed, before the operation is ready.
    tiltShiftOp.removeDependency(decryptOp)
    print(tiltShiftOp.dependencies)  // [] — read-only

    let queue = WorkQueue(name: "images")
    try queue.addOperations([networkOp, decryptOp, tiltShiftOp])
    await queue.waitUntilAllOperationsAreFinished()
}

func policies() throws {
    let upload = AsyncBlockOperation(name: "upload") {}
    let cleanUp = AsyncBlockOperation(name: "cleanUp") {}
    let notify = AsyncBlockOperation(name: "notify") {}
    try cleanUp.addDependency(upload)                           // runs in any case
    try notify.addDependency(upload, policy: .requireSuccess)   // only after a successful upload
}

func cycles() throws {
    let op2 = AsyncOperation(name: "2")
    let op5 = AsyncOperation(name: "5")
    let op3 = AsyncOperation(name: "3")
    try op5.addDependency(op3)
    try op3.addDependency(op2)
    do {
        try op2.addDependency(op5)
    } catch let error as DependencyCycleError {
        print(error.cycle)  // ["2", "5", "3", "2"]: 2 waits for 5, 5 for 3, 3 for 2
    }
}

protocol ImageProvider {
    var image: [UInt8]? { get }
}

final class Download: AsyncOperation, ImageProvider, @unchecked Sendable {
    private let storage = LockedValue<[UInt8]?>(nil)
    var image: [UInt8]? { storage.withLock { $0 } }
    override func execute() async throws {
        storage.withLock { $0 = [0xFF, 0xD8, 0xFF] }
    }
}

final class TiltShift: AsyncOperation, ImageProvider, @unchecked Sendable {
    private let inputImage: [UInt8]?
    private let storage = LockedValue<[UInt8]?>(nil)
    var image: [UInt8]? { storage.withLock { $0 } }

    init(image: [UInt8]? = nil) {
        inputImage = image
        super.init(name: "tiltShift")
    }

    override func execute() async throws {
        let dependencyImage = dependencies
            .compactMap { ($0 as? ImageProvider)?.image }
            .first
        guard let inputImage = inputImage ?? dependencyImage else { return }
        storage.withLock { $0 = inputImage.reversed() }
    }
}

func injection() async throws {
    let retrieval = ResultOperation<[UInt8]>(name: "retrieval") { [1, 2, 3] }
    let processing = TransformOperation<[UInt8], Int>(name: "processing") { data in data.count }
    try processing.injectResult(from: retrieval)

    let queue = WorkQueue()
    try queue.addOperations([retrieval, processing])
    await queue.waitUntilAllOperationsAreFinished()
    print(processing.output ?? 0)  // 3
}

func failedInjection() async throws {
    let retrieval = ResultOperation<[UInt8]>(name: "retrieval") { throw TestError("offline") }
    let processing = TransformOperation<[UInt8], Int>(name: "processing") { $0.count }
    try processing.injectResult(from: retrieval)
    let queue = WorkQueue()
    try queue.addOperations([retrieval, processing])
    await queue.waitUntilAllOperationsAreFinished()
    if case .dependencyDidNotSucceed(_, _, let errors)? = processing.errors.first as? InjectionError {
        print(processing.state, errors)  // cancelled [TestError(offline)]
    }
}

final class Thumbnail: AsyncOperation, @unchecked Sendable {
    struct Inputs { var pixels: [UInt8] = []; var size = 0 }
    let inputs = LockedValue(Inputs())
}

func manualInjection() throws {
    let pixels = ResultOperation<[UInt8]>(name: "pixels") { [9, 9, 9] }
    let size = ResultOperation<Int>(name: "size") { 64 }
    let thumbnail = Thumbnail(name: "thumbnail")
    try thumbnail.injectResult(from: pixels) { operation, dependency, errors in
        // Here we have access to both operations, plus any errors from the dependency.
        operation.inputs.withLock { $0.pixels = dependency.output ?? [] }
    }
    try thumbnail.injectResult(from: size) { operation, dependency, _ in
        operation.inputs.withLock { $0.size = dependency.output ?? 0 }
    }
}

final class LoginGroup: GroupOperation, @unchecked Sendable {
    init(credentials: String, session: CompletableOperation<String>) {
        let persist = TransformOperation<String, Void>(name: "persist") { token in }
        try? persist.injectResult(from: session)
        super.init(name: "Login", operations: [session, persist])
        addCondition(MutualExclusion(LoginGroup.self))
        // Cancel the whole login if the injected session task is cancelled from outside.
        session.addObserver(BlockObserver(didCancel: { [weak self] _, errors in
            self?.cancel(error: errors.first)
        }))
    }
}

final class FooBarBaz: GroupOperation, @unchecked Sendable {
    init() {
        super.init(name: "FooBarBaz", operations: [ResultOperation<Bool>(name: "Foo") { true }])
    }

    override func childDidFinish(_ child: AsyncOperation) {
        guard child.state == .finished, !isCancelled,
              let foo = child as? ResultOperation<Bool>, child.name == "Foo" else { return }
        if foo.output == true {
            try? addChild(AsyncBlockOperation(name: "Baz") {})
        } else {
            try? addChild(AsyncBlockOperation(name: "Bar") {})
        }
    }
}

func longLivedGroup() async throws {
    let batch = GroupOperation(name: "batch 42", keepsRunningUntilClosed: true)
    let queue = WorkQueue()
    try queue.addOperation(batch)
    for item in 0..<3 {
        try batch.addChild(AsyncBlockOperation(name: "item \(item)") {})
    }
    batch.close()
    await batch.waitUntilFinished()
}

func remoteOperation() async throws {
    let download = CompletableOperation<[UInt8]>(name: "download on worker 3") { operation in
        // send the task over the network here
    }
    let tiltShift = TransformOperation<[UInt8], [UInt8]>(name: "tilt-shift") { $0.reversed() }
    try tiltShift.injectResult(from: download)
    let queue = WorkQueue()
    try queue.addOperations([download, tiltShift])

    // Later, when the worker's reply arrives:
    download.complete(with: [1, 2, 3])
    await queue.waitUntilAllOperationsAreFinished()
}

func cancellation() async throws {
    let queue = WorkQueue()
    let download = AsyncBlockOperation(name: "download") {
        while true {
            try Task.checkCancellation()
            try await Task.sleep(for: .milliseconds(1))
        }
    }
    try queue.addOperation(download)
    download.cancel(error: TestError("user cancelled"))
    await queue.waitUntilAllOperationsAreFinished()
    print(download.state)  // cancelled
}

func conditions() throws {
    let download = AsyncBlockOperation(name: "download") {}
    download.addCondition(MutualExclusion(category: "download:example.com", limit: 4))
    download.addCondition(BlockCondition(name: "online") { _ in true })
    download.addCondition(NoFailedDependencies())
    download.timeout = .seconds(30)
    download.retryPolicy = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(200), multiplier: 2)
    download.addObserver(BlockObserver(
        willExecute: { operation in print("start \(operation.name)") },
        didFinish: { operation, state, errors in print("\(operation.name): \(state) \(errors)") }
    ))
}

@MainActor final class Gallery {
    var images: [[UInt8]] = []
}

func completionOnTheMainActor(gallery: Gallery) throws {
    let tiltShift = TiltShift(image: [1, 2, 3])
    /// Runs on the main actor when the operation completes.
    tiltShift.onMainActorCompletion { operation in
        if let image = (operation as? TiltShift)?.image {
            gallery.images.append(image)
        }
    }
    try WorkQueue().addOperation(tiltShift)
}
// END GUIDE EXAMPLES

final class DocumentationExamplesTests: XCTestCase {
    func testDocumentationIsInSync() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        var directory = testFile.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("docs/operations.md").path),
            directory.path != "/"
        {
            directory = directory.deletingLastPathComponent()
        }
        let guide = directory.appendingPathComponent("docs/operations.md")
        let markdown = try String(contentsOf: guide, encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let blocks = markdown.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
        XCTAssertGreaterThan(blocks.count, 10)
        for block in blocks {
            XCTAssertTrue(source.contains(block), "docs/operations.md has an example that is not in this file:\n\(block)")
        }
    }

    func testLifecycleExample() async throws {
        let queue = WorkQueue()
        let empty = Checksum(bytes: [])
        let full = Checksum(bytes: [1])
        try queue.addOperations([empty, full])
        await waitForQueue(queue)
        XCTAssertEqual(empty.state, .failed)
        XCTAssertEqual(full.state, .finished)
    }

    func testDependencyExamples() async throws {
        try await dependencies()
        try policies()
        try cycles()
    }

    func testProtocolSearchExample() async throws {
        let download = Download()
        let tiltShift = TiltShift()
        try tiltShift.addDependency(download)
        let queue = WorkQueue()
        try queue.addOperations([download, tiltShift])
        await waitForQueue(queue)
        XCTAssertEqual(tiltShift.image, [0xFF, 0xD8, 0xFF].reversed())
    }

    func testInjectionExamples() async throws {
        try await injection()
        try await failedInjection()
        try manualInjection()
    }

    func testGroupExamples() async throws {
        let session = CompletableOperation<String>(name: "session") { $0.complete(with: "token") }
        let login = LoginGroup(credentials: "c", session: session)
        let fooBarBaz = FooBarBaz()
        let queue = WorkQueue()
        try queue.addOperations([login, fooBarBaz])
        await waitForQueue(queue)
        XCTAssertEqual(login.state, .finished)
        XCTAssertEqual(fooBarBaz.children.map(\.name), ["Foo", "Baz"])

        let cancelledSession = CompletableOperation<String>(name: "session")
        let cancelledLogin = LoginGroup(credentials: "c", session: cancelledSession)
        try queue.addOperation(cancelledLogin)
        await eventually { cancelledSession.isExecuting }
        cancelledSession.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(cancelledLogin.state, .cancelled)

        try await longLivedGroup()
    }

    func testRemoteCancellationConditionAndCompletionExamples() async throws {
        try await remoteOperation()
        try await cancellation()
        try conditions()
        let gallery = Gallery()
        try completionOnTheMainActor(gallery: gallery)
        let deadline = ContinuousClock.now + .seconds(10)
        while await gallery.images.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        let images = await gallery.images
        XCTAssertEqual(images, [[3, 2, 1]])
    }
}
