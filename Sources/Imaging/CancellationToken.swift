import CImageCodecs
import Runtime

/// What decoding, filtering and encoding check between rows to stop early: the ``CancellationFlag`` of
/// the work (raised when the task awaiting a ``ComputeThreads`` job is cancelled) and, when the imaging
/// code is called from inside a Swift task, that task's cancellation.
///
/// Tokens are made by ``with(_:_:)`` and must not outlive its body (they may hold the current task).
struct CancellationToken: @unchecked Sendable {
    // @unchecked Sendable: `UnsafeCurrentTask.isCancelled` may be read from any thread while the task
    // exists, which `with` guarantees for the token's lifetime; the flag is Sendable.
    private let task: UnsafeCurrentTask?
    private let flag: CancellationFlag?

    /// A token that never cancels (for work outside any task and without a flag).
    static let never = CancellationToken(task: nil, flag: nil)

    private init(task: UnsafeCurrentTask?, flag: CancellationFlag?) {
        self.task = task
        self.flag = flag
    }

    /// Runs `body` with a token for `flag` and the current task, if there is one.
    static func with<Result>(_ flag: CancellationFlag?, _ body: (CancellationToken) throws -> Result) rethrows -> Result
    {
        try withUnsafeCurrentTask { task in try body(CancellationToken(task: task, flag: flag)) }
    }

    /// Whether the work should stop.
    var isCancelled: Bool { (flag?.isRaised ?? false) || (task?.isCancelled ?? false) }

    /// Throws `ImagingError` `.cancelled` when the work should stop.
    func check() throws {
        if isCancelled { throw ImagingError.cancelledError }
    }

    /// Runs `body` with this token as the codecs' C callback (`sw_cancellation`), valid during `body`.
    func withCodecCallback<Result>(_ body: (UnsafePointer<sw_cancellation>) throws -> Result) rethrows -> Result {
        var token = self
        return try withUnsafePointer(to: &token) { pointer in
            var callback = sw_cancellation(
                should_stop: { context in
                    guard let context else { return 0 }
                    return context.assumingMemoryBound(to: CancellationToken.self).pointee.isCancelled ? 1 : 0
                },
                context: UnsafeRawPointer(pointer))
            return try withUnsafePointer(to: &callback) { try body($0) }
        }
    }
}
