import Foundation

/// Which server's connection thread the calling thread is, if any: set by every libmicrohttpd callback
/// (a request, a body's read, a body's end), so that a stop asked for on one of the server's own
/// connection threads (a handler that stops its server, or the last reference released there) does not
/// wait for that very thread to end, which would never happen.
enum ConnectionThreadMark {
    /// One POSIX thread-specific slot for the whole process, holding the server's `StopSignal` (unretained:
    /// only compared, never dereferenced).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Marks the calling thread as a connection thread of the server whose signal is `stop`.
    static func mark(_ stop: StopSignal) {
        let identity = Unmanaged.passUnretained(stop).toOpaque()
        let current: UnsafeMutableRawPointer? = pthread_getspecific(key)
        if current != identity {
            pthread_setspecific(key, identity)
        }
    }

    /// Whether the calling thread is a connection thread of the server whose signal is `stop`.
    static func isConnectionThread(of stop: StopSignal) -> Bool {
        let current: UnsafeMutableRawPointer? = pthread_getspecific(key)
        return current == Unmanaged.passUnretained(stop).toOpaque()
    }
}
