import CZeroMQ
import Foundation

/// Watches one socket's handshakes (and, when asked, its connections coming and going) through libzmq's
/// socket monitor: a PAIR socket connected to the monitor endpoint, confined (like the socket it watches)
/// to the socket's thread, which polls it.
final class SocketMonitor {
    /// What the monitor reported.
    enum Event {
        case handshakeFailed(HandshakeFailure)
        case connection(ConnectionEvent)
    }

    /// The monitor's PAIR socket, to poll for `ZMQ_POLLIN`.
    let handle: UnsafeMutableRawPointer
    private let watched: Socket
    private var isClosed = false

    /// The events that end a handshake badly.
    private static let failureEvents =
        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
        | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
    /// The events that make a connection live or end it.
    private static let connectionEvents = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED

    /// Starts monitoring `socket` (call before it connects): its failed handshakes, and with
    /// `connections` its connections becoming live and ending.
    init(watching socket: Socket, context: MessagingContext, connections: Bool = false) throws {
        let endpoint = "inproc://shiftwork-monitor-\(UUID().uuidString)"
        let events = Self.failureEvents | (connections ? Self.connectionEvents : 0)
        guard zmq_socket_monitor(socket.handle, endpoint, events) == 0 else {
            throw ZeroMQError.last("zmq_socket_monitor")
        }
        guard let pair = zmq_socket(context.handle, ZMQ_PAIR) else {
            zmq_socket_monitor(socket.handle, nil, 0)
            throw ZeroMQError.last("zmq_socket (monitor)")
        }
        var linger: Int32 = 0
        zmq_setsockopt(pair, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
        guard zmq_connect(pair, endpoint) == 0 else {
            let error = ZeroMQError.last("connect \(endpoint)")
            zmq_close(pair)
            zmq_socket_monitor(socket.handle, nil, 0)
            throw error
        }
        self.handle = pair
        self.watched = socket
    }

    deinit { close() }

    /// The handshake failures reported since the last call, without blocking (other events are dropped).
    func failures() -> [HandshakeFailure] {
        events().compactMap { event in
            if case .handshakeFailed(let failure) = event { return failure }
            return nil
        }
    }

    /// The events reported since the last call, in order, without blocking.
    func events() -> [Event] {
        var found: [Event] = []
        while true {
            // An event is two frames: 6 bytes (UInt16 event, UInt32 value, native order), then the endpoint.
            guard let head = receiveFrame(flags: ZMQ_DONTWAIT) else { return found }
            guard let address = receiveFrame(flags: 0) else { return found }
            guard head.count >= 6 else { continue }
            let event = head.withUnsafeBytes { UInt16($0.loadUnaligned(fromByteOffset: 0, as: UInt16.self)) }
            let value = head.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 2, as: UInt32.self)) }
            let endpoint = String(decoding: address, as: UTF8.self)
            switch Int32(event) {
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
                found.append(
                    .handshakeFailed(HandshakeFailure(reason: .refused(statusCode: value), endpoint: endpoint)))
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
                found.append(
                    .handshakeFailed(HandshakeFailure(reason: .protocolError(code: value), endpoint: endpoint)))
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                found.append(.handshakeFailed(HandshakeFailure(reason: .unspecified, endpoint: endpoint)))
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
                found.append(.connection(.live(endpoint: endpoint)))
            case ZMQ_EVENT_DISCONNECTED:
                found.append(.connection(.lost(endpoint: endpoint)))
            default:
                break
            }
        }
    }

    private func receiveFrame(flags: Int32) -> [UInt8]? {
        // A zmq_msg_t must not move while initialised: keep it on the heap.
        let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
        defer { message.deallocate() }
        zmq_msg_init(message)
        defer { zmq_msg_close(message) }
        while zmq_msg_recv(message, handle, flags) < 0 {
            if zmq_errno() != EINTR { return nil }
        }
        let size = zmq_msg_size(message)
        guard size > 0, let data = zmq_msg_data(message) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }

    /// Stops monitoring and closes the PAIR socket (before the watched socket closes).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        zmq_socket_monitor(watched.handle, nil, 0)
        zmq_close(handle)
    }
}
