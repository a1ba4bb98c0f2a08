import Operations
import XCTest

/// A producer that finishes without an output (`@unchecked Sendable`: restated from AsyncOperation).
final class NilProducer: AsyncOperation, ResultProducing, @unchecked Sendable {
    init() { super.init(name: "nil producer") }
    var output: [UInt8]? { nil }
}

/// Result injection between producers and consumers.
final class InjectionTests: XCTestCase {
    func testBytesInjectedFromProducerToConsumer() async throws {
        let download = ResultOperation<[UInt8]>(name: "download") { Array(repeating: 7, count: 1024) }
        let checksum = TransformOperation<[UInt8], Int>(name: "checksum") { bytes in bytes.reduce(0) { $0 + Int($1) } }
        try checksum.injectResult(from: download)
        // A remote producer feeding another consumer.
        let remote = CompletableOperation<[UInt8]>(name: "remote download")
        let size = TransformOperation<[UInt8], Int>(name: "size") { $0.count }
        try size.injectResult(from: remote)
        let queue = WorkQueue()
        try queue.addOperations([download, checksum, remote, size])
        remote.complete(with: [1, 2, 3])
        await waitForQueue(queue)
        XCTAssertEqual(checksum.output, 7 * 1024)
        XCTAssertEqual(size.output, 3)

        // A cancelled producer cancels the consumer.
        let cancelledProducer = CompletableOperation<[UInt8]>(name: "cancelled producer")
        let consumer = TransformOperation<[UInt8], Int>(name: "consumer") { $0.count }
        try consumer.injectResult(from: cancelledProducer)
        try queue.addOperations([cancelledProducer, consumer])
        cancelledProducer.cancel()
        await waitForQueue(queue)
        XCTAssertEqual(consumer.state, .cancelled)
        XCTAssertTrue(consumer.errors.first is InjectionError)

        // A producer finishing without output cancels the consumer too.
        let empty = NilProducer()
        let consumer2 = TransformOperation<[UInt8], Int>(name: "consumer2") { $0.count }
        try consumer2.injectResult(from: empty)
        try queue.addOperations([empty, consumer2])
        await waitForQueue(queue)
        XCTAssertEqual(empty.state, .finished)
        XCTAssertEqual(consumer2.state, .cancelled)
        guard case .missingResult(let dependency)? = consumer2.errors.first as? InjectionError else {
            return XCTFail("\(consumer2.errors)")
        }
        XCTAssertEqual(dependency, "nil producer")
    }

    func testInjectionFromAnAlreadyFinishedProducer() async throws {
        let producer = ResultOperation<String>(name: "early") { "value" }
        let queue = WorkQueue()
        try queue.addOperation(producer)
        await waitForQueue(queue)
        let consumer = TransformOperation<String, Int>(name: "late") { $0.count }
        try consumer.injectResult(from: producer)
        XCTAssertEqual(consumer.input, "value")
        try queue.addOperation(consumer)
        await waitForQueue(queue)
        XCTAssertEqual(consumer.output, 5)
    }
}
