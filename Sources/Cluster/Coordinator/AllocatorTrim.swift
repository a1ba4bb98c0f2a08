import Foundation
import Runtime

/// Gives the memory the C allocator holds free back to the system (glibc's `malloc_trim`) once the
/// coordinator let batches go. glibc returns a heap's free memory only from its top, and only above
/// `M_TRIM_THRESHOLD` (256 MiB in `shiftwork coordinator`, which tunes it against per-task churn): the
/// pages of a finished batch's running items and a retired batch's items, freed among allocations that
/// live on, would otherwise stay resident for good (docs/benchmarks.md, "Soak").
///
/// A batch that ends `request`s a trim; the coordinator's timer carries it out (`trimIfRequested`) when
/// no batch runs, or at most every `busyInterval` while batches run: a trim gives back pages that busy
/// threads would fault in again at once. It walks every arena, so it runs on a thread of its own (a
/// utility dispatch queue, not Swift's cooperative pool), one at a time.
enum AllocatorTrim {
    /// Between two trims while batches run.
    static let busyInterval: Duration = .seconds(10)

    private struct State {
        var requested = false
        var running = false
        var last: ContinuousClock.Instant?
    }

    private static let state = InlineLock(State())
    /// `malloc_trim`, looked up at run time: it is glibc's, and not in Swift's Glibc module.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Memory was let go: trim at the next chance.
    static func request() {
        state.withLock { $0.requested = true }
    }

    /// Starts a trim if one was requested, and the coordinator is `idle` or last trimmed `busyInterval` ago.
    static func trimIfRequested(idle: Bool, now: ContinuousClock.Instant) {
        guard Self.trim != nil else { return }
        let start = state.withLock { state -> Bool in
            guard state.requested, !state.running else { return false }
            if !idle, let last = state.last, now - last < busyInterval { return false }
            state.requested = false
            state.running = true
            state.last = now
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            _ = Self.trim?(0)
            Self.state.withLock { $0.running = false }
        }
    }
}
