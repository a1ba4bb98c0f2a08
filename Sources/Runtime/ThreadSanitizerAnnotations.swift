#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// ThreadSanitizer's annotation calls, found at run time: present only in a process built with
/// `--sanitize=thread` (the TSan runtime exports them), `nil` in every other build, where the calls below
/// do nothing. Used by ``InlineLock`` to tell TSan about a lock it cannot see (a futex), and by
/// ``ComputeThreads`` about a hand-off it cannot see (a continuation resumed early).
///
/// Looked up with `dlsym` rather than declared in a C shim, so that the Operations module keeps no C
/// dependency (Tests/EngineTSan builds it alone) and no build setting has to say whether TSan is on: the
/// runtime being there is the answer.
public enum ThreadSanitizerAnnotations {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    private static let acquire: Annotation? = lookUp("__tsan_acquire")
    private static let release: Annotation? = lookUp("__tsan_release")

    /// Whether the ThreadSanitizer runtime is in this process (the annotations are made).
    public static var isActive: Bool { acquire != nil && release != nil }

    /// Tells TSan that the calling thread has just taken the lock at `address`: what the last holder did
    /// before ``releasing(_:)`` happened before what this thread does now.
    @usableFromInline
    static func acquired(_ address: UnsafeMutableRawPointer) {
        acquire?(address)
    }

    /// Tells TSan that the calling thread is about to give back the lock at `address`.
    @usableFromInline
    static func releasing(_ address: UnsafeMutableRawPointer) {
        release?(address)
    }

    /// Call on the thread that hands `object` (or what it guards) to another thread, just before the hand-off:
    /// what this thread did so far happens before what the thread calling ``tookOver(_:)`` with the same
    /// object does next.
    ///
    /// For a continuation resumed from a thread of one's own (``ComputeThreads``): when the resume comes
    /// before the awaiting task has suspended, Swift's runtime lets the task go on without telling TSan
    /// (`swift_continuation_await` takes that path with no `__tsan_acquire`), so TSan reports the result
    /// the thread wrote as a data race with its reader. Call this before `resume`, and ``tookOver(_:)``
    /// after the `await`, with one object both sides hold (alive across both calls).
    public static func handingOver(_ object: AnyObject) {
        releasing(Unmanaged.passUnretained(object).toOpaque())
    }

    /// Call on the thread that receives what another thread handed over with ``handingOver(_:)``, after it
    /// received it and before it reads it.
    public static func tookOver(_ object: AnyObject) {
        acquired(Unmanaged.passUnretained(object).toOpaque())
    }

    private static func lookUp(_ name: String) -> Annotation? {
        // RTLD_DEFAULT: the executable and every library it loaded, where the TSan runtime is linked in.
        #if canImport(Darwin)
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT on Darwin
        #else
        let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT on Linux
        #endif
        guard let symbol = dlsym(everywhere, name) else { return nil }
        return unsafeBitCast(symbol, to: Annotation.self)
    }
}
