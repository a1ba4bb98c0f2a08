import CEpoll
import ClusterSimulation
import Foundation

/// A simulated worker's TCP connection to the coordinator, on which it speaks ZMTP 3.1 as a DEALER itself
/// (`ZMTPFraming`; what it receives is read by a `ZMTPReader` its group keeps): no libzmq socket, so no
/// I/O thread, mailbox or pipe per message, and one `send` per wake-up for everything the worker says.
/// The connection is non-blocking and watched by its group's `epoll` set; one thread owns it.
struct ZMTPConnection {
    enum State {
        /// No descriptor: waiting to connect (again) at `retryAtNs`.
        case idle
        /// `connect` in progress: the greeting and READY go once it succeeds.
        case connecting
        /// Connected, greeting and READY sent; messages wait for the peer's READY (a peer that checks the
        /// worker with ZAP drops a connection whose first message comes before its READY).
        case handshaking
        case open
    }

    private(set) var descriptor: Int32 = -1
    private(set) var state = State.idle
    /// When an idle connection tries again.
    private(set) var retryAtNs: UInt64 = 0
    /// Bytes to write: after a (re)connect the greeting and READY first, then whole messages.
    private var output: [UInt8]
    /// Messages queued before the peer's READY.
    private var held: [UInt8] = []
    private var written = 0
    private var watchesWrites = false
    private let handshake: [UInt8]

    /// A connection (not opened yet) for the DEALER with routing identity `identity`.
    init(identity: [UInt8]) {
        handshake = ZMTPFraming.greeting + ZMTPFraming.ready(identity: identity)
        output = handshake
    }

    /// Whether bytes wait to be written.
    var hasOutput: Bool { written < output.count }

    /// Queues a one-frame message; `flush` writes it (once the peer is ready).
    mutating func queue(_ payload: UnsafeRawBufferPointer) {
        if state == .open {
            ZMTPFraming.appendMessage(payload, to: &output)
        } else {
            ZMTPFraming.appendMessage(payload, to: &held)
        }
    }

    /// The peer's READY came: the messages held for it follow.
    mutating func peerIsReady() {
        guard state == .handshaking else { return }
        state = .open
        output.append(contentsOf: held)
        held.removeAll()
    }

    /// Queues bytes as they are (a ZMTP command's frame).
    mutating func queueRaw(_ bytes: UnsafeRawBufferPointer) {
        output.append(contentsOf: bytes)
    }

    /// Starts connecting to `address`, watched in `poller` with `tag`; returns the error's text, if any.
    mutating func connect(to address: sockaddr_in, poller: Int32, tag: UInt32) -> String? {
        let socket = Glibc.socket(
            AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return "socket: \(String(cString: strerror(errno))) (raise ulimit -n?)" }
        var on: Int32 = 1
        // As libzmq sets it.
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var target = address
        let status = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 || errno == EINPROGRESS else {
            let text = String(cString: strerror(errno))
            Glibc.close(socket)
            return "connect: \(text)"
        }
        descriptor = socket
        state = .connecting
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue
        event.data.u32 = tag
        watchesWrites = true
        guard epoll_ctl(poller, EPOLL_CTL_ADD, socket, &event) == 0 else {
            let text = String(cString: strerror(errno))
            drop(retryAtNs: 0)
            return "epoll_ctl: \(text)"
        }
        return nil
    }

    /// After `epoll` reported the connecting descriptor: whether it connected (else it is idle again, to
    /// retry at `retryAtNs`, its messages kept: none was written).
    mutating func finishConnecting(nowNs: UInt64) -> Bool {
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size) == 0, error == 0 else {
            drop(retryAtNs: nowNs + 100_000_000)  // libzmq's default reconnect interval
            return false
        }
        state = .handshaking
        return true
    }

    /// Writes what waits, as far as the socket takes it; watches for room when it does not take it all.
    /// Returns `false` when the connection is lost.
    mutating func flush(poller: Int32, tag: UInt32) -> Bool {
        guard state == .open || state == .handshaking else { return true }
        while hasOutput {
            let sent = output.withUnsafeBytes { bytes in
                Glibc.send(
                    descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written,
                    Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent > 0 {
                written += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                return false
            }
        }
        if !hasOutput {
            output.removeAll(keepingCapacity: true)
            written = 0
        }
        if hasOutput != watchesWrites {
            watchesWrites = hasOutput
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (watchesWrites ? EPOLLOUT.rawValue : 0)
            event.data.u32 = tag
            epoll_ctl(poller, EPOLL_CTL_MOD, descriptor, &event)
        }
        return true
    }

    /// Closes the descriptor; the connection is idle until `retryAtNs`, its next connection starting anew
    /// with the greeting and READY. Messages queued after the peer's READY and not written are lost, as a
    /// broken TCP connection loses them; those held for a READY that never came go on the next connection.
    mutating func drop(retryAtNs: UInt64) {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        state = .idle
        self.retryAtNs = retryAtNs
        output = handshake
        written = 0
        watchesWrites = false
    }

    /// Closes the descriptor for good (the kernel still sends what was written).
    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        state = .idle
    }

    /// The IPv4 address of a `tcp://A.B.C.D:PORT` endpoint, or `nil`.
    static func address(of endpoint: String) -> sockaddr_in? {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return nil }
        let host = String(endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon])
        guard let port = UInt16(endpoint[endpoint.index(after: colon)...]) else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return address
    }
}
