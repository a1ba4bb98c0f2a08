import Synchronization

/// A value guarded by a `Synchronization.Mutex` stored inline (no allocation of its own), which
/// ThreadSanitizer also sees: the lock for state kept inside objects that exist by the million (a queued
/// task) and for every other `Mutex` of the package. ``LockedValue`` is the general-purpose lock.
///
/// Why not `Mutex` alone: on Linux it is a futex, whose system calls ThreadSanitizer does not intercept, so
/// a TSan run reports data races on everything it guards. Why not ``LockedValue``: its `pthread_mutex_t`
/// lives in an allocation of its own (one per lock of every task operation the coordinator holds), and a
/// `pthread_mutex_t` cannot be a stored property of a struct: Swift may move a struct in memory, and a
/// pthread mutex (and TSan's record of it) must stay where it was initialised. `Mutex` is the one inline lock whose address is stable (it is
/// address-only), so this type keeps it and tells ThreadSanitizer what it does: after taking the lock it
/// calls `__tsan_acquire`, before giving it back `__tsan_release`, on the Mutex's address. Those two calls
/// are made only when the TSan runtime is in the process (``ThreadSanitizerAnnotations``); otherwise each
/// costs one test of a pointer that is `nil`.
///
/// Never `await` (or block for long) inside ``withLock(_:)``: the lock is not reentrant, and it may be held
/// by a thread of Swift's cooperative pool.
public struct InlineLock<Value: ~Copyable>: ~Copyable, Sendable {
    // Sendable like Mutex: the value is `sending` in and out, and reached only under the lock.
    @usableFromInline let mutex: Mutex<Value>

    /// Creates the lock around `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The Mutex is address-only (it never moves while it exists), and borrowed in place: its address
        // names this lock to TSan. Taken before locking: the value itself must not be touched (TSan checks
        // `inout` accesses) before the acquire below orders this thread after the last holder.
        let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            ThreadSanitizerAnnotations.acquired(address)
            defer { ThreadSanitizerAnnotations.releasing(address) }
            return try body(&value)
        }
    }
}
