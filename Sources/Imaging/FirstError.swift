import Runtime

/// Collects the first error thrown by a worker thread (`StripBlender`'s threads).
final class FirstError: Sendable {
    private let error = InlineLock<(any Error)?>(nil)
    func record(_ error: any Error) { self.error.withLock { if $0 == nil { $0 = error } } }
    var first: (any Error)? { error.withLock { $0 } }
}
