import Dispatch
import Foundation
import Runtime
import Synchronization
import XCTest

/// `InlineLock` excludes, and ThreadSanitizer sees it exclude: under `scripts/test-operations-tsan` and
/// `scripts/test-package-tsan` (which set `SHIFTWORK_EXPECT_TSAN=1`), an unannotated futex would make TSan
/// report the plain field below as a data race and fail the run.
final class InlineLockTests: XCTestCase {
    /// A field with no synchronisation of its own: only the lock orders the threads' writes to it.
    private final class UnguardedCounter: @unchecked Sendable {
        var count = 0
    }

    private final class Guarded: Sendable {
        let lock = InlineLock<Int>(0)
        let outside = UnguardedCounter()
    }

    func testThreadsTakingTheLockSeeEachOthersWritesInsideAndOutsideIt() {
        let guarded = Guarded()
        let threads = 4
        let rounds = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds {
                guarded.lock.withLock { value in
                    value += 1
                    guarded.outside.count += 1
                }
            }
        }
        XCTAssertEqual(guarded.lock.withLock { $0 }, threads * rounds)
        XCTAssertEqual(guarded.lock.withLock { _ in guarded.outside.count }, threads * rounds)
    }

    func testErrorsThrownInsideComeOutAndLeaveTheLockFree() {
        struct Refused: Error {}
        let lock = InlineLock<[String]>([])
        XCTAssertThrowsError(
            try lock.withLock { (value: inout [String]) throws(Refused) -> Void in
                value.append("before the error")
                throw Refused()
            }
        ) { XCTAssertTrue($0 is Refused) }
        // Taken again: the failed body gave it back, and kept what it wrote.
        XCTAssertEqual(lock.withLock { $0 }, ["before the error"])
    }

    /// Inline: the lock adds nothing to a Mutex (no pointer to storage of its own), so an object holding
    /// three of them (the coordinator's queued task) grows by no allocation.
    func testTheLockIsAMutexInPlaceAndNothingMore() {
        typealias Payload = (input: [UInt8]?, count: Int)
        XCTAssertEqual(MemoryLayout<InlineLock<Payload>>.size, MemoryLayout<Mutex<Payload>>.size)
        XCTAssertEqual(MemoryLayout<InlineLock<Bool>>.size, MemoryLayout<Mutex<Bool>>.size)
        XCTAssertEqual(MemoryLayout<InlineLock<Bool>>.alignment, MemoryLayout<Mutex<Bool>>.alignment)
    }

    /// The TSan scripts set SHIFTWORK_EXPECT_TSAN=1: there the annotations must have been found, or the lock
    /// would be invisible again and the test above would pass for the wrong reason.
    func testAnnotationsAreActiveExactlyUnderThreadSanitizer() throws {
        let expected = ProcessInfo.processInfo.environment["SHIFTWORK_EXPECT_TSAN"] == "1"
        XCTAssertEqual(ThreadSanitizerAnnotations.isActive, expected)
    }
}
