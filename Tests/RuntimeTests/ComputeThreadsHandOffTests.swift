import Foundation
import Runtime
import XCTest

/// A result handed from a thread of one's own to the task that awaits it, as `ComputeThreads` hands an
/// encoded image to the worker: when the thread resumes the continuation before the task has suspended,
/// Swift's runtime tells ThreadSanitizer nothing, and only `ThreadSanitizerAnnotations.handingOver` /
/// `tookOver` make the hand-off visible. Under the TSan scripts (SHIFTWORK_EXPECT_TSAN=1), a missing
/// annotation is a reported data race on `bytes`; elsewhere the values are checked.
final class ComputeThreadsHandOffTests: XCTestCase {
    /// Written only by the thread that makes it; read only by the task that awaited it, afterwards.
    private final class Output: @unchecked Sendable {
        var bytes: [UInt8] = []
    }

    /// The case that Swift's runtime leaves out, made certain: the thread resumes while the task is still
    /// inside the continuation's closure (the closure waits 10 ms, without any synchronisation TSan would
    /// see, before it returns and the task awaits).
    func testAResultResumedBeforeTheTaskAwaitsIsHandedOverVisibly() async {
        for round in 0..<3 {
            let output: Output = await withCheckedContinuation { continuation in
                PoolThread.start(name: "test handoff") {
                    let output = Output()
                    output.bytes = [UInt8](repeating: UInt8(round), count: 64)
                    ThreadSanitizerAnnotations.handingOver(output)
                    continuation.resume(returning: output)
                }
                usleep(10_000)
            }
            ThreadSanitizerAnnotations.tookOver(output)
            XCTAssertEqual(output.bytes, [UInt8](repeating: UInt8(round), count: 64))
        }
    }

    /// `ComputeThreads.run` makes the same hand-off for every job (small jobs on free threads often end
    /// before the caller awaits; not forced here, so a race would be reported only in some runs).
    func testWhatAJobWritesIsSeenByTheTaskThatAwaitedIt() async throws {
        let threads = ComputeThreads(name: "test handoff", count: 2)
        defer { threads.shutdown() }
        for round in 0..<500 {
            let output = try await threads.run { _ in
                let output = Output()
                output.bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 64)
                return output
            }
            XCTAssertEqual(output.bytes, [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 64))
        }
    }
}
