#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX counting semaphore (ThreadSanitizer understands `sem_post`/`sem_wait`, unlike a futex).
final class CountingSemaphore: @unchecked Sendable {
    // @unchecked Sendable: sem_t is made for use from many threads; its address never changes.
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func signal() { sem_post(semaphore) }

    /// Waits until the count is positive and takes one.
    func wait() {
        while sem_wait(semaphore) != 0 {}  // EINTR: wait again
    }
}
