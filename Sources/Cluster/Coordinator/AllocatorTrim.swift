import Foundation
import Synchronization

/// Gives the memory the C allocator holds free back to the system (glibc's `malloc_trim`) after the
/// coordinator let a batch go. glibc returns a heap's free memory only from its top, and only above
/// `M_TRIM_THRESHOLD` (256 MiB in `shiftwork coordinator`, which tunes it against per-task churn): the
/// pages of a finished batch's operations and a retired batch's items, freed among allocations that
/// live on, would otherwise stay resident for good (docs/benchmarks.md, "Soak").
///
/// A trim walks every arena, so it runs on a thread of its own (a utility dispatch queue, not Swift's
/// cooperative pool), one at a time, a second after the first request: the requests of a busy second are
/// folded into one trim.
enum AllocatorTrim {
    private static let scheduled = Atomic<Bool>(false)
    /// `malloc_trim`, looked up at run time: it is glibc's, and not in Swift's Glibc module.
    nonisolated(unsafe) private static let trim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Asks for a trim within about a second.
    static func request() {
        guard Self.trim != nil, !Self.scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) {
            Self.scheduled.store(false, ordering: .releasing)
            _ = Self.trim?(0)
        }
    }
}
