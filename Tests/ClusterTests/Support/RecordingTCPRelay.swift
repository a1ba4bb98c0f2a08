import Foundation
import Runtime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 that forwards every connection to `upstream` and records every byte it
/// carries, both ways: a capture of the traffic between two peers, for tests. It can also hold the traffic
/// back (`holding`), as a link that stalls for a while and then delivers everything, in order.
final class RecordingTCPRelay: @unchecked Sendable {
    /// The relay's endpoint, `tcp://127.0.0.1:PORT`: give it to the peer that connects.
    let endpoint: String
    private let listener: Int32
    private let upstreamPort: UInt16
    private let recorded = InlineLock<[UInt8]>([])
    private let stopping = Atomic<Bool>(false)
    private let held = Atomic<Bool>(false)
    // `lock` guards `threads`.
    private let lock = NSLock()
    private var threads: [Thread] = []
    private let descriptors = InlineLock<[Int32]>([])

    /// Listens on a free loopback port and forwards to `127.0.0.1:upstreamPort`.
    init(upstreamPort: Int) throws {
        self.upstreamPort = UInt16(upstreamPort)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("relay: socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socket, 16) == 0 else {
            Glibc.close(socket)
            throw HarnessError("relay: bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        listener = socket
        endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        spawn { self.acceptLoop() }
    }

    /// Every byte relayed so far, in both directions (interleaved as it came).
    var recording: [UInt8] { recorded.withLock { $0 } }

    /// While `true`, bytes the relay reads either way wait in it instead of being passed on; set back to
    /// `false`, everything held is delivered, in order.
    var holding: Bool {
        get { held.load(ordering: .relaxed) }
        set { held.store(newValue, ordering: .relaxed) }
    }

    /// Stops accepting, closes every connection and waits for the relay's threads to end.
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in descriptors.withLock({ $0 }) { shutdown(descriptor, Int32(SHUT_RDWR)) }
        while lock.withLock({ threads.contains { !$0.isFinished } }) { usleep(10_000) }
        Glibc.close(listener)
        for descriptor in descriptors.withLock({ $0 }) { Glibc.close(descriptor) }
    }

    deinit { stop() }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        lock.withLock { threads.append(thread) }
        thread.start()
    }

    private func acceptLoop() {
        while !stopping.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let upstream = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            descriptors.withLock { $0 += [client, upstream] }
            if connected != 0 {
                shutdown(client, Int32(SHUT_RDWR))
                continue
            }
            spawn { self.pump(from: client, to: upstream) }
            spawn { self.pump(from: upstream, to: client) }
        }
    }

    /// Copies one direction until either side closes, recording what passes.
    private func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            recorded.withLock { $0.append(contentsOf: buffer[0..<count]) }
            while held.load(ordering: .relaxed) && !stopping.load(ordering: .relaxed) { usleep(5_000) }
            var sent = 0
            while sent < count {
                // MSG_NOSIGNAL: a peer that closed its side (a dropped connection) fails the send, not the test process.
                let written = buffer[sent..<count].withUnsafeBytes {
                    send(target, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                sent += written
            }
            if sent < count { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(target, Int32(SHUT_RDWR))
    }
}

/// Whether `haystack` contains any `window`-byte run of `needle` (every offset of `needle` is tried).
func containsAnyWindow(of needle: [UInt8], in haystack: [UInt8], window: Int = 32) -> Bool {
    guard needle.count >= window, haystack.count >= window else { return false }
    var windows = Set<ArraySlice<UInt8>>()
    windows.reserveCapacity(needle.count)
    for start in 0...(needle.count - window) { windows.insert(needle[start..<(start + window)]) }
    for start in 0...(haystack.count - window) where windows.contains(haystack[start..<(start + window)]) {
        return true
    }
    return false
}
