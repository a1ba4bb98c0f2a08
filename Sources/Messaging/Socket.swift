import CZeroMQ
import Glibc

/// A ZeroMQ socket, confined to the thread that created it.
///
/// libzmq sockets are not thread-safe: this type is deliberately not `Sendable`. Code outside this module
/// uses `SocketChannel`, which owns a `Socket` on a dedicated thread.
final class Socket {
    let handle: UnsafeMutableRawPointer
    private let message: UnsafeMutablePointer<zmq_msg_t>
    private var isClosed = false

    init(context: MessagingContext, kind: SocketKind, options: SocketOptions) throws {
        guard let handle = zmq_socket(context.handle, kind.rawValue) else {
            throw ZeroMQError.last("zmq_socket")
        }
        self.handle = handle
        // A zmq_msg_t must never be copied bitwise (small messages live inside the struct): keep one on
        // the heap and reuse it for every receive.
        self.message = .allocate(capacity: 1)
        // On a thrown error `deinit` runs (every stored property is set) and releases both.
        try apply(options, kind: kind)
    }

    deinit {
        close()
        message.deallocate()
    }

    private func apply(_ options: SocketOptions, kind: SocketKind) throws {
        try set(ZMQ_LINGER, options.lingerMilliseconds)
        try set(ZMQ_SNDHWM, options.sendHighWaterMark)
        try set(ZMQ_RCVHWM, options.receiveHighWaterMark)
        try set(ZMQ_MAXMSGSIZE, options.maxMessageSize)
        try set(ZMQ_RECONNECT_IVL, options.reconnectIntervalMilliseconds)
        try set(ZMQ_RECONNECT_IVL_MAX, options.reconnectIntervalMaxMilliseconds)
        if options.heartbeatIntervalMilliseconds > 0 {
            try set(ZMQ_HEARTBEAT_IVL, options.heartbeatIntervalMilliseconds)
            let timeout = options.heartbeatTimeoutMilliseconds
            try set(ZMQ_HEARTBEAT_TIMEOUT, timeout > 0 ? timeout : options.heartbeatIntervalMilliseconds * 3)
            if options.heartbeatTTLMilliseconds > 0 { try set(ZMQ_HEARTBEAT_TTL, options.heartbeatTTLMilliseconds) }
        }
        if let identity = options.identity {
            let status = identity.withUnsafeBytes {
                zmq_setsockopt(handle, ZMQ_ROUTING_ID, $0.baseAddress, $0.count)
            }
            if status != 0 { throw ZeroMQError.last("set ZMQ_ROUTING_ID") }
        }
        if let curve = options.curve {
            try apply(curve)
        }
        if kind == .router {
            try set(ZMQ_ROUTER_MANDATORY, Int32(options.routerMandatory ? 1 : 0))
            try set(ZMQ_ROUTER_HANDOVER, Int32(options.routerHandover ? 1 : 0))
        }
    }

    private func apply(_ curve: CurveSecurity) throws {
        guard Z85Key.isSupported else { throw CurveKeyError.unsupported }
        switch curve {
        case .server(let keys):
            try set(ZMQ_CURVE_SERVER, Int32(1))
            try setKey(ZMQ_CURVE_SECRETKEY, keys.secretKey, "ZMQ_CURVE_SECRETKEY")
            try setKey(ZMQ_ZAP_DOMAIN, "shiftwork", "ZMQ_ZAP_DOMAIN")
        case .client(let keys, let serverKey):
            try setKey(ZMQ_CURVE_SERVERKEY, serverKey.z85, "ZMQ_CURVE_SERVERKEY")
            try setKey(ZMQ_CURVE_PUBLICKEY, keys.publicKey.z85, "ZMQ_CURVE_PUBLICKEY")
            try setKey(ZMQ_CURVE_SECRETKEY, keys.secretKey, "ZMQ_CURVE_SECRETKEY")
        }
    }

    /// Sets a string option (a Z85 key is passed as 41 bytes: its 40 characters and a NUL).
    private func setKey(_ option: Int32, _ text: String, _ name: String) throws {
        let status = text.withCString {
            zmq_setsockopt(handle, option, $0, text.utf8.count + (option == ZMQ_ZAP_DOMAIN ? 0 : 1))
        }
        if status != 0 { throw ZeroMQError.last("set \(name)") }
    }

    func set<Value: BitwiseCopyable>(_ option: Int32, _ value: Value) throws {
        let status = withUnsafeBytes(of: value) {
            zmq_setsockopt(handle, option, $0.baseAddress, $0.count)
        }
        if status != 0 {
            throw ZeroMQError.last("zmq_setsockopt(\(option))")
        }
    }

    /// A socket with `options`, watched by a `SocketMonitor` when `monitored` (for its connections too when
    /// `watchesConnections`), bound to `bind` and
    /// connected to `connect`, with the endpoint of its first bind (a wildcard port resolved). On the
    /// thread that will own it; on an error, whatever was made is closed.
    static func opened(
        context: MessagingContext, kind: SocketKind, options: SocketOptions, bind: [String], connect: [String],
        monitored: Bool, watchesConnections: Bool = false
    ) throws -> (socket: Socket, monitor: SocketMonitor?, endpoint: String?) {
        let socket = try Socket(context: context, kind: kind, options: options)
        var monitor: SocketMonitor?
        var endpoint: String?
        do {
            // Before any bind or connect, which resolve their addresses with it.
            try socket.set(ZMQ_IPV6, Int32((options.ipv6 ?? EndpointFamily.needsIPv6(bind + connect)) ? 1 : 0))
            if monitored || watchesConnections {
                monitor = try SocketMonitor(watching: socket, context: context, connections: watchesConnections)
            }
            for address in bind {
                try socket.bind(address)
                if endpoint == nil { endpoint = socket.lastEndpoint() }
            }
            for address in connect { try socket.connect(address) }
        } catch {
            monitor?.close()
            socket.close()
            throw error
        }
        return (socket, monitor, endpoint)
    }

    func bind(_ endpoint: String) throws {
        if zmq_bind(handle, endpoint) != 0 { throw ZeroMQError.last("bind \(endpoint)") }
    }

    func connect(_ endpoint: String) throws {
        if zmq_connect(handle, endpoint) != 0 { throw ZeroMQError.last("connect \(endpoint)") }
    }

    /// The endpoint the socket last bound, with a wildcard port resolved (`tcp://127.0.0.1:41231`).
    func lastEndpoint() -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The socket's readiness, from `ZMQ_EVENTS`.
    func events() -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_EVENTS, &value, &size) == 0 else { return 0 }
        return value
    }

    /// Result of a non-blocking send.
    enum SendOutcome {
        case sent
        /// The high-water mark is reached: try again when the socket is writable.
        case wouldBlock
        /// A ROUTER has no peer with the message's identity (it left or never came).
        case unroutable
    }

    /// Sends all frames as one multipart message without blocking.
    func send(_ frames: [[UInt8]]) throws -> SendOutcome {
        guard !frames.isEmpty else { return .sent }
        for index in frames.indices {
            let flags = ZMQ_DONTWAIT | (index < frames.count - 1 ? ZMQ_SNDMORE : 0)
            while true {
                let status = frames[index].withUnsafeBytes {
                    zmq_send(handle, $0.baseAddress, $0.count, flags)
                }
                if status >= 0 { break }
                let error = zmq_errno()
                if error == EINTR { continue }
                // Only the first frame can be refused: libzmq accepts the rest of a message it started.
                if index == 0 && error == EAGAIN { return .wouldBlock }
                if index == 0 && error == EHOSTUNREACH { return .unroutable }
                throw ZeroMQError(code: error, operation: "send")
            }
        }
        return .sent
    }

    /// Receives one whole multipart message without blocking; `nil` when none is waiting.
    ///
    /// With `appendingPeerKey`, one more frame follows the message's own: the `User-Id` libzmq attached to
    /// it, which for a CurveZMQ server is what the ZAP handler answered for the sender's handshake (its
    /// public key in Z85, see `ZAPAuthenticator`); empty when there is none (no CurveZMQ, `inproc://`).
    func receive(appendingPeerKey: Bool = false) throws -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        var peerKey: [UInt8] = []
        while true {
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            let flags: Int32 = frames.isEmpty ? ZMQ_DONTWAIT : 0
            if zmq_msg_recv(message, handle, flags) < 0 {
                let error = zmq_errno()
                if error == EINTR { continue }
                if error == EAGAIN && frames.isEmpty { return nil }
                throw ZeroMQError(code: error, operation: "receive")
            }
            let size = zmq_msg_size(message)
            let frame = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                if size > 0, let source = zmq_msg_data(message), let target = buffer.baseAddress {
                    target.initialize(from: source.assumingMemoryBound(to: UInt8.self), count: size)
                }
                count = size
            }
            // A ROUTER's identity frame, made by libzmq, may carry no metadata: the peer's own frames do.
            if appendingPeerKey, peerKey.isEmpty, let userID = zmq_msg_gets(message, "User-Id") {
                peerKey = Array(String(cString: userID).utf8)
            }
            frames.append(frame)
            if zmq_msg_more(message) == 0 {
                if appendingPeerKey { frames.append(peerKey) }
                return frames
            }
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        zmq_close(handle)
    }
}
