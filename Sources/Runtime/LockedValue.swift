#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value protected by a `pthread_mutex_t`: the package's general-purpose lock, behind every operation,
/// queue, group, runner and condition of the engine, and a small public utility for subclasses of
/// `AsyncOperation` that keep mutable state (the class is `@unchecked Sendable`, so that state must be
/// locked). A copyable handle: copies share the one locked value. Where a lock must live inline (no
/// allocation of its own, as in an object that exists by the million), use ``InlineLock`` instead.
///
/// Why a pthread mutex: ThreadSanitizer understands it (the package's tests run under TSan:
/// `scripts/test-operations-tsan` and `scripts/test-package-tsan`, part of `make test`), it costs the least
/// per lock taken, and here the value and the mutex share one allocation. ``InlineLock`` (an annotated
/// `Synchronization.Mutex`) in an allocation of its own was measured in its place: the engine's benchmark took
/// about 20 % more CPU (docs/benchmarks.md, "Operations engine"). (Lock-free counters that need no lock use
/// `Synchronization.Atomic`, which TSan understands.)
///
/// Avoid zero-sized values (`Void`): their address coincides with the mutex and confuses TSan.
///
/// Never `await` (or block for long) inside ``withLock(_:)``: the lock is not reentrant and is held by a
/// thread of Swift's cooperative pool.
public struct LockedValue<Value>: @unchecked Sendable {
    // @unchecked: the storage is a class the compiler cannot check; the value is reached only under the mutex.
    @usableFromInline let storage: LockedValueStorage<Value>

    /// Creates the lock around `value`.
    public init(_ value: consuming Value) {
        storage = LockedValueStorage<Value>.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLockedValue(body)
    }
}

/// The single allocation behind a ``LockedValue``: the mutex in the header, the value as the one element
/// (moved in, not copied).
@usableFromInline
final class LockedValueStorage<Value>: ManagedBuffer<pthread_mutex_t, Value> {
    static func make(_ value: consuming Value) -> LockedValueStorage<Value> {
        // `create` is declared to return ManagedBuffer; it returns an instance of the class it was called on.
        let storage = unsafeDowncast(
            create(minimumCapacity: 1) { _ in pthread_mutex_t() }, to: LockedValueStorage<Value>.self)
        storage.withUnsafeMutablePointerToHeader { _ = pthread_mutex_init($0, nil) }
        // The element's address is stable for the object's lifetime; the value is moved there.
        storage.withUnsafeMutablePointerToElements { $0 }.initialize(to: value)
        return storage
    }

    @inlinable
    func withLockedValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { mutex, value in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    deinit {
        withUnsafeMutablePointers { mutex, value in
            _ = value.deinitialize(count: 1)
            _ = pthread_mutex_destroy(mutex)
        }
    }
}
