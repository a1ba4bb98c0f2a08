import Wire
import XCTest

@testable import Cluster

/// The worker's cache of downloaded images, for tilt-shifts sent to it by reference.
final class InputCacheTests: XCTestCase {
    func testTakeHandsOverOnceAndForgets() {
        var cache = InputCache(capacityBytes: 100)
        cache.store("d1", data: [1, 2, 3], mediaType: "image/png")
        XCTAssertEqual(cache.totalBytes, 3)
        XCTAssertEqual(cache.take("d1")?.data, [1, 2, 3])
        XCTAssertNil(cache.take("d1"))
        XCTAssertEqual(cache.totalBytes, 0)
    }

    func testTheOldestGoFirstAndTooLargeIsNotKept() {
        var cache = InputCache(capacityBytes: 10)
        cache.store("a", data: Array(repeating: 1, count: 4), mediaType: "image/jpeg")
        cache.store("b", data: Array(repeating: 2, count: 4), mediaType: "image/jpeg")
        _ = cache.take("a")
        cache.store("c", data: Array(repeating: 3, count: 4), mediaType: "image/jpeg")
        cache.store("d", data: Array(repeating: 4, count: 4), mediaType: "image/jpeg")  // evicts b
        XCTAssertNil(cache.take("b"))
        XCTAssertNotNil(cache.take("c"))
        XCTAssertNotNil(cache.take("d"))
        cache.store("huge", data: Array(repeating: 0, count: 11), mediaType: "image/jpeg")
        XCTAssertEqual(cache.count, 0)
        for index in 0..<5_000 { cache.store("t\(index)", data: [1, 2], mediaType: "image/png") }
        XCTAssertEqual(cache.count, 5)
        XCTAssertEqual(cache.totalBytes, 10)
    }

    func testResolveFillsReferencesOrSaysOneIsMissing() {
        var cache = InputCache(capacityBytes: 100)
        cache.store("b/0/download", data: [9, 9], mediaType: "image/png")
        let assignment = TaskAssignment(
            taskID: "b/0/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift, source: "x.png",
            inputs: [InjectedInput(fromTaskID: "b/0/download", data: [], mediaType: "image/png", onWorker: true)])
        let resolved = cache.resolve(assignment)
        XCTAssertEqual(resolved?.inputs.first?.data, [9, 9])
        XCTAssertEqual(resolved?.inputs.first?.onWorker, false)
        XCTAssertNil(cache.resolve(assignment), "taken once: a second reference misses")
        let inline = TaskAssignment(
            taskID: "t", batchID: "b", attempt: 1, kind: .tiltShift, source: "y",
            inputs: [InjectedInput(fromTaskID: "d", data: [1], mediaType: "image/png")])
        XCTAssertEqual(cache.resolve(inline), inline, "inputs with their bytes pass through")
    }
}
