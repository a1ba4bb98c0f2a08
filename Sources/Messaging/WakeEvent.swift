import CZeroMQ
import Glibc

/// An `eventfd` that other threads write to wake a thread sleeping in `zmq_poll` (which polls it next to
/// its sockets). Non-blocking: a wake-up that finds the counter already set costs nothing more.
final class WakeEvent: Sendable {
    /// The descriptor to poll for `ZMQ_POLLIN`.
    let descriptor: Int32

    /// - Throws: `ZeroMQError` when the process cannot create an `eventfd` (out of descriptors).
    init() throws {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else { throw ZeroMQError(code: errno, operation: "eventfd") }
        self.descriptor = descriptor
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Makes the descriptor readable (from any thread).
    func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(descriptor, &one, 8)
    }

    /// Resets it, on the polling thread, once `zmq_poll` reported it readable.
    func clear() {
        var value: UInt64 = 0
        _ = Glibc.read(descriptor, &value, 8)
    }
}
