/// A value behind a lock, shared by every copy of the handle: the package's general-purpose lock, behind
/// every operation, queue, group, runner and condition of the engine, and a small public utility for
/// subclasses of `AsyncOperation` that keep mutable state (such a class is `@unchecked Sendable`, so that
/// state must be locked).
///
/// It is ``InlineLock`` in an allocation of its own, so there is one locking primitive in the package (a
/// `Synchronization.Mutex` that ThreadSanitizer is told about; ``InlineLock``'s doc says why): use
/// ``InlineLock`` where the lock can live inside its owner (a `final class`'s stored property, an object
/// that exists by the million), and this handle where several owners share one locked value or a copyable
/// type needs a lock.
///
/// Never `await` (or block for long) inside ``withLock(_:)``: the lock is not reentrant, and it may be held
/// by a thread of Swift's cooperative pool.
public struct LockedValue<Value>: @unchecked Sendable {
    // @unchecked: the storage is a class whose value is reached only under its lock.
    @usableFromInline let storage: LockedValueStorage<Value>

    /// Creates the lock around `value`.
    public init(_ value: consuming Value) {
        storage = LockedValueStorage(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try storage.withLockedValue(body)
    }
}

/// The single allocation behind a ``LockedValue``: an ``InlineLock`` and the value it guards.
@usableFromInline
final class LockedValueStorage<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `lock.withLock`.
    @usableFromInline let lock = InlineLock(false)
    @usableFromInline var value: Value

    init(_ value: consuming Value) {
        self.value = value
    }

    @inlinable
    func withLockedValue<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        // The lock guards `value` (a stored property beside it), not its own Bool; the result leaves the lock
        // as any value read under a lock does (`sending` is for values that the lock's own state holds).
        try lock.withLock { (_: inout Bool) throws(E) -> LockedResult<Result> in
            LockedResult(try body(&value))
        }.value
    }
}

/// A result carried out of ``LockedValueStorage``'s critical section.
@usableFromInline
struct LockedResult<Value>: @unchecked Sendable {
    // @unchecked: made under the lock and handed to the one caller that asked for it.
    @usableFromInline let value: Value

    @usableFromInline
    init(_ value: consuming Value) {
        self.value = value
    }
}
